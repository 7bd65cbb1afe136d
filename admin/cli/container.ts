// Entry point of the container image (Dockerfile): the first argument picks what the one image runs.
//   docker run payroute admin | proxy | migrate [status | down --yes] | cli <command> [options]
// Each role is imported into this same process (no shell, no second node), so `docker stop`'s SIGTERM reaches the
// server's own shutdown handler directly.
const USAGE = [
  'usage: <image> <role> [arguments]',
  '  admin                          the admin process (Koa) on ADMIN_PORT',
  '  proxy                          the proxy process (the public front door) on PROXY_PORT',
  '  migrate [status | down --yes]  apply pending migrations (or list them, or revert the last one), then exit',
  '  cli <command> [options]        the operator CLI (cli --help lists its commands)',
  '',
].join('\n');

const role = process.argv[2];
// The role's own argv parsing (the CLI's parseArgs) must not see the role word.
process.argv.splice(2, 1);

switch (role) {
  case 'admin':
    await import('../server.js');
    break;
  case 'proxy':
    await import('../../proxy/server.js');
    break;
  case 'migrate':
    await import('./migrate.js');
    break;
  case 'cli':
    await import('./cli.js');
    break;
  case '--help':
  case '-h':
  case 'help':
    process.stdout.write(USAGE);
    break;
  default:
    process.stderr.write(`unknown role ${JSON.stringify(role ?? '')}\n${USAGE}`);
    process.exit(2);
}
