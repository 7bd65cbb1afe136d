// Compiles contracts/EIP3009Token.sol and contracts/Multicall3.sol with the solc npm package (the compiler as
// WebAssembly: no native toolchain, nothing downloaded) and writes their artifacts (contracts/*.json), which the
// tests deploy on anvil (test/support/anvil.ts). `npm run contracts:build` after editing a source;
// test/settlement/chain-token.test.ts recompiles both and fails when a committed artifact differs, so they cannot drift.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import solc from 'solc';
import type { Abi, Hex } from 'viem';

export const SOURCE_PATH = fileURLToPath(new URL('./EIP3009Token.sol', import.meta.url));
export const ARTIFACT_PATH = fileURLToPath(new URL('./EIP3009Token.json', import.meta.url));
/** Multicall3's aggregate3, for orders paying several receivers in one transaction (see the source). */
export const MULTICALL_ARTIFACT_PATH = fileURLToPath(new URL('./Multicall3.json', import.meta.url));

export interface TokenArtifact {
  readonly contractName: string;
  readonly solcVersion: string;
  readonly sourceSha256: string;
  readonly abi: Abi;
  readonly bytecode: Hex;
  readonly deployedBytecode: Hex;
}

interface SolcError {
  readonly severity: 'error' | 'warning' | 'info';
  readonly formattedMessage: string;
}

interface SolcOutput {
  readonly errors?: readonly SolcError[];
  readonly contracts?: Record<
    string,
    Record<
      string,
      {
        readonly abi: Abi;
        readonly evm: {
          readonly bytecode: { readonly object: string };
          readonly deployedBytecode: { readonly object: string };
        };
      }
    >
  >;
}

/** Compiles the token; throws with the compiler's messages on any error or warning. */
export function compileToken(): TokenArtifact {
  return compileContract('EIP3009Token');
}

/** Compiles contracts/Multicall3.sol. */
export function compileMulticall(): TokenArtifact {
  return compileContract('Multicall3');
}

function compileContract(CONTRACT: 'EIP3009Token' | 'Multicall3'): TokenArtifact {
  const SOURCE_NAME = `${CONTRACT}.sol`;
  const source = readFileSync(fileURLToPath(new URL(`./${SOURCE_NAME}`, import.meta.url)), 'utf8');
  const input = {
    language: 'Solidity',
    sources: { [SOURCE_NAME]: { content: source } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // Pinned rather than solc's default (newer than some chains and anvil hardforks run): cancun has every
      // opcode the code needs (PUSH0, MCOPY) and runs on anvil 1.7.1's default hardfork and on Base.
      evmVersion: 'cancun',
      outputSelection: { [SOURCE_NAME]: { [CONTRACT]: ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const compile: (input: string) => string = solc.compile;
  const output = JSON.parse(compile(JSON.stringify(input))) as SolcOutput;
  // Warnings fail too: the source is small enough to keep warning-free, and a new one deserves a look.
  const problems = (output.errors ?? []).filter((e) => e.severity !== 'info');
  if (problems.length > 0) {
    throw new Error(`solc failed on ${SOURCE_NAME}:\n${problems.map((e) => e.formattedMessage).join('\n')}`);
  }
  const contract = output.contracts?.[SOURCE_NAME]?.[CONTRACT];
  if (contract === undefined) throw new Error(`solc produced no ${CONTRACT} in ${SOURCE_NAME}`);
  const { object: bytecode } = contract.evm.bytecode;
  const { object: deployedBytecode } = contract.evm.deployedBytecode;
  if (bytecode.length === 0 || deployedBytecode.length === 0)
    throw new Error(`solc produced empty ${CONTRACT} bytecode`);
  const versionOf: () => string = solc.version;
  return {
    contractName: CONTRACT,
    solcVersion: versionOf(),
    sourceSha256: createHash('sha256').update(source, 'utf8').digest('hex'),
    abi: contract.abi,
    bytecode: `0x${bytecode}`,
    deployedBytecode: `0x${deployedBytecode}`,
  };
}

/** The artifact file's exact text: two-space JSON with the keys in TokenArtifact's order, and a final newline. */
export function artifactText(artifact: TokenArtifact): string {
  const ordered: TokenArtifact = {
    contractName: artifact.contractName,
    solcVersion: artifact.solcVersion,
    sourceSha256: artifact.sourceSha256,
    abi: artifact.abi,
    bytecode: artifact.bytecode,
    deployedBytecode: artifact.deployedBytecode,
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const [path, artifact] of [
    [ARTIFACT_PATH, compileToken()],
    [MULTICALL_ARTIFACT_PATH, compileMulticall()],
  ] as const) {
    writeFileSync(path, artifactText(artifact));
    console.log(`wrote ${path} (${artifact.solcVersion}; runtime ${(artifact.deployedBytecode.length - 2) / 2} bytes)`);
  }
}
