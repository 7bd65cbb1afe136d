// The service's ES256 signing keys. Private halves are sealed in the database; public halves are
// published at {host_url}/.well-known/jwks.json. A key is published before it signs and stays published while
// tokens it signed can still be valid.
import { randomUUID } from 'node:crypto';
import {
  type JWK,
  type JWTPayload,
  type JWTVerifyResult,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
} from 'jose';
import type { ServiceContext } from '../context.js';
import { SigningKey } from '../db/entities/index.js';
import { InvariantError } from '../errors/invariant.js';

const ALG = 'ES256';
/** How long a retired key stays in the JWKS: longer than any token the service issues. */
const RETIRED_GRACE_MS = 30 * 86_400_000;
const CACHE_MS = 30_000;

export interface Jwks {
  keys: JWK[];
}

export interface TokenSigner {
  sign(
    claims: JWTPayload,
    opts: { subject?: string; audience: string; ttlSecs: number; typ?: string },
  ): Promise<string>;
  verify(token: string, audience: string): Promise<JWTVerifyResult>;
  jwks(): Promise<Jwks>;
}

async function loadKeys(ctx: ServiceContext) {
  const now = ctx.now();
  const rows = await ctx.db.em().find(SigningKey, {}, { orderBy: { activatesAt: 'desc', kid: 'asc' } });
  return rows.filter((r) => r.retiresAt == null || r.retiresAt.getTime() + RETIRED_GRACE_MS > now.getTime());
}

/** Creates the first signing key when none exists. Safe to race: both keys get published. */
export async function ensureSigningKey(ctx: ServiceContext): Promise<void> {
  const active = (await loadKeys(ctx)).filter((k) => k.retiresAt == null);
  if (active.length > 0) return;
  await rotateSigningKey(ctx, 0);
}

/** Adds a new key that signs from `activateInMs` on; the previous one retires then. */
export async function rotateSigningKey(ctx: ServiceContext, activateInMs: number): Promise<string> {
  const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
  const kid = randomUUID();
  const pub = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
  const priv = { ...(await exportJWK(privateKey)), kid, alg: ALG };
  const activatesAt = new Date(ctx.now().getTime() + activateInMs);
  const em = ctx.db.em();
  await em.nativeUpdate(SigningKey, { retiresAt: null }, { retiresAt: activatesAt });
  em.create(SigningKey, {
    kid,
    publicJwk: JSON.stringify(pub),
    privateKeyEnc: ctx.box.seal(JSON.stringify(priv)),
    activatesAt,
    retiresAt: null,
  });
  await em.flush();
  return kid;
}

export function createTokenSigner(ctx: ServiceContext): TokenSigner {
  const issuer = ctx.config.publicUrl;
  // The key set is built once per load: jose's local key set imports each public key on first use and keeps it, so a
  // set made per verify would import (WebCrypto importKey) the key again for every token.
  let cached:
    | {
        at: number;
        jwks: Jwks;
        keySet: ReturnType<typeof createLocalJWKSet>;
        signing: { kid: string; jwk: JWK } | undefined;
      }
    | undefined;

  async function state(force = false) {
    const now = ctx.now().getTime();
    if (!force && cached !== undefined && now - cached.at < CACHE_MS) return cached;
    const rows = await loadKeys(ctx);
    const signingRow = rows.find(
      (r) => r.activatesAt.getTime() <= now && (r.retiresAt == null || r.retiresAt.getTime() > now),
    );
    const jwks: Jwks = { keys: rows.map((r) => JSON.parse(r.publicJwk) as JWK) };
    cached = {
      at: now,
      jwks,
      keySet: createLocalJWKSet(jwks),
      signing:
        signingRow === undefined
          ? undefined
          : { kid: signingRow.kid, jwk: JSON.parse(ctx.box.open(signingRow.privateKeyEnc)) as JWK },
    };
    return cached;
  }

  return {
    async sign(claims, opts) {
      let s = await state();
      if (s.signing === undefined) s = await state(true);
      if (s.signing === undefined) throw new InvariantError('no active signing key');
      const key = await importJWK(s.signing.jwk, ALG);
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: ALG, kid: s.signing.kid, typ: opts.typ ?? 'JWT' })
        .setIssuer(issuer)
        .setAudience(opts.audience)
        .setIssuedAt()
        .setJti(randomUUID())
        .setExpirationTime(Math.floor(ctx.now().getTime() / 1000) + opts.ttlSecs);
      if (opts.subject !== undefined) jwt.setSubject(opts.subject);
      return jwt.sign(key);
    },
    async verify(token, audience) {
      const opts = { issuer, audience, algorithms: [ALG] };
      try {
        return await jwtVerify(token, (await state()).keySet, opts);
      } catch (err) {
        // An unknown kid may be a key another process just created: reload once.
        if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw err;
        return jwtVerify(token, (await state(true)).keySet, opts);
      }
    },
    async jwks() {
      return (await state()).jwks;
    },
  };
}
