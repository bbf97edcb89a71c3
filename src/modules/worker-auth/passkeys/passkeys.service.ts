import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { Repository } from 'typeorm';
import { AUTH_STORE, type AuthStore } from '../../../auth/shared-store/auth-store.js';
import { PlatformError } from '../../../common/errors.js';
import type { UserEntity } from '../entities/user.entity.js';
import { isUniqueViolation, UsersService } from '../users.service.js';
import { PasskeyEntity } from './passkey.entity.js';
import { authenticationResponseOf, challengeOf, registrationResponseOf, type RelyingParty } from './webauthn-wire.js';

/** How long a ceremony may take from its start to its finish; the challenge is gone after it (or once used). */
export const PASSKEY_CHALLENGE_TTL_SECONDS = 300;
/** The browser's own timeout for the ceremony, as the original answered it. */
const CEREMONY_TIMEOUT_MS = 60_000;
/** Enough for every device a person owns; it bounds what one account can store. */
export const MAX_PASSKEYS_PER_USER = 20;

/**
 * The WebAuthn library with its certificate parsers is some 250 files (about 0.3 s of CPU to load); every HTTP
 * worker would pay for it at start, so it loads on the first ceremony instead.
 */
let webauthnLibrary: Promise<typeof import('@simplewebauthn/server')> | undefined;
const webauthn = () => (webauthnLibrary ??= import('@simplewebauthn/server'));

/** Injection token of the clock (tests move time); `Date.now` by default. */
export const PASSKEY_CLOCK = Symbol('PASSKEY_CLOCK');

interface StoredChallenge {
  type: 'registration' | 'authentication';
  /** The signed-in user a registration belongs to; null for a login. */
  user_id: string | null;
  expires_at: number;
}

/** A passkey as its owner sees it listed: no key material. */
export interface PasskeyView {
  credential_id: string;
  name: string;
  transports: string[];
  sign_count: number;
  created_at: string;
  last_used_at: string | null;
}

/**
 * Passkeys (WebAuthn) of WorkerAuth users. Registration belongs to a signed-in user; login takes any discoverable
 * credential and names its owner. Challenges live in the shared AuthStore (every worker sees them) for
 * PASSKEY_CHALLENGE_TTL_SECONDS and are taken, not read: each one is good for one finish, whatever its outcome.
 * User verification is required (a passkey is the whole login), and every assertion must carry a sign counter
 * above the stored one unless the authenticator keeps none (always 0): a replayed or cloned authenticator's
 * assertion is refused, and of two concurrent logins with one counter value only one wins.
 */
@Injectable()
export class PasskeysService {
  private readonly now: () => number;

  constructor(
    @InjectRepository(PasskeyEntity) private readonly passkeys: Repository<PasskeyEntity>,
    @Inject(AUTH_STORE) private readonly store: AuthStore,
    private readonly users: UsersService,
    @Optional() @Inject(PASSKEY_CLOCK) clock?: () => number,
  ) {
    this.now = clock ?? Date.now;
  }

  /** Creation options for a new passkey of `userId` (the web client passes them to `navigator.credentials.create`). */
  async registrationOptions(
    userId: string | null,
    party: RelyingParty,
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const user = await this.signedInUser(userId);
    const existing = await this.passkeys.find({ where: { userId: user.id }, order: { createdAt: 'ASC' } });
    if (existing.length >= MAX_PASSKEYS_PER_USER)
      throw new PlatformError(
        'CONFLICT',
        `An account keeps at most ${MAX_PASSKEYS_PER_USER} passkeys; remove one first`,
      );
    const options = await (
      await webauthn()
    ).generateRegistrationOptions({
      rpName: party.rpName,
      rpID: party.rpId,
      userName: user.username,
      userDisplayName: user.username,
      // The user handle is the user id, so a login can check the assertion names the credential's owner.
      userID: new TextEncoder().encode(user.id),
      timeout: CEREMONY_TIMEOUT_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
      // Login offers no credential list (discoverable credentials only), so a passkey must live on the authenticator.
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    });
    await this.putChallenge(options.challenge, { type: 'registration', user_id: user.id });
    return options;
  }

  /** Verifies the browser's answer to `registrationOptions` and stores the passkey for the signed-in user. */
  async register(
    userId: string | null,
    credential: unknown,
    party: RelyingParty,
    name?: unknown,
  ): Promise<{ passkey: PasskeyEntity; user: UserEntity }> {
    const user = await this.signedInUser(userId);
    const response = registrationResponseOf(credential);
    const challenge = await this.takeChallenge(challengeOf(response.response.clientDataJSON), 'registration');
    if (challenge.user_id !== user.id)
      throw new PlatformError('UNAUTHORIZED', 'Invalid or expired challenge: it was issued to another session');
    let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verification = await (
        await webauthn()
      ).verifyRegistrationResponse({
        response,
        expectedChallenge: challengeOf(response.response.clientDataJSON),
        expectedOrigin: party.origins,
        expectedRPID: party.rpId,
        requireUserVerification: true,
      });
    } catch (error) {
      throw new PlatformError('UNAUTHORIZED', `Registration verification failed: ${(error as Error).message}`);
    }
    if (!verification.verified) throw new PlatformError('UNAUTHORIZED', 'Registration verification failed');
    // Checked again here: ceremonies started side by side all passed the check at their start.
    if ((await this.passkeys.countBy({ userId: user.id })) >= MAX_PASSKEYS_PER_USER)
      throw new PlatformError(
        'CONFLICT',
        `An account keeps at most ${MAX_PASSKEYS_PER_USER} passkeys; remove one first`,
      );
    const registered = verification.registrationInfo.credential;
    const credentialKey = keyOf(registered.id);
    const taken = await this.passkeys.findOneBy({ credentialKey });
    if (taken)
      throw new PlatformError(
        'CONFLICT',
        taken.userId === user.id
          ? 'This passkey is already registered'
          : 'This passkey is registered to another account',
      );
    const passkey = this.passkeys.create({
      id: randomUUID(),
      userId: user.id,
      credentialKey,
      credentialId: registered.id,
      publicKey: Buffer.from(registered.publicKey).toString('base64url'),
      signCount: registered.counter,
      name: nameOf(name),
      transports: registered.transports ?? response.response.transports ?? [],
      createdAt: new Date(this.now()),
      lastUsedAt: null,
    });
    try {
      await this.passkeys.insert(passkey);
    } catch (error) {
      if (isUniqueViolation(error)) throw new PlatformError('CONFLICT', 'This passkey is already registered');
      throw error;
    }
    return { passkey, user };
  }

  /** Request options for a login with any discoverable passkey of this site. */
  async authenticationOptions(party: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const options = await (
      await webauthn()
    ).generateAuthenticationOptions({
      rpID: party.rpId,
      allowCredentials: [],
      timeout: CEREMONY_TIMEOUT_MS,
      userVerification: 'required',
    });
    await this.putChallenge(options.challenge, { type: 'authentication', user_id: null });
    return options;
  }

  /** Verifies an assertion against the stored passkey, moves its counter on, and answers its owner. */
  async authenticate(credential: unknown, party: RelyingParty): Promise<{ user: UserEntity; passkey: PasskeyEntity }> {
    const response = authenticationResponseOf(credential);
    const expectedChallenge = challengeOf(response.response.clientDataJSON);
    await this.takeChallenge(expectedChallenge, 'authentication');
    const passkey = await this.passkeys.findOneBy({ credentialKey: keyOf(response.id) });
    if (!passkey) throw new PlatformError('UNAUTHORIZED', 'Passkey not registered');
    // The signature does not cover the user handle: an answer naming someone else is refused here.
    if (
      response.response.userHandle !== undefined &&
      response.response.userHandle !== Buffer.from(passkey.userId, 'utf8').toString('base64url')
    )
      throw new PlatformError(
        'UNAUTHORIZED',
        'Authentication verification failed: the passkey belongs to another user',
      );
    let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
    try {
      verification = await (
        await webauthn()
      ).verifyAuthenticationResponse({
        response,
        expectedChallenge,
        expectedOrigin: party.origins,
        expectedRPID: party.rpId,
        credential: {
          id: passkey.credentialId,
          publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
          counter: passkey.signCount,
          transports: passkey.transports as never,
        },
        requireUserVerification: true,
      });
    } catch (error) {
      throw new PlatformError('UNAUTHORIZED', `Authentication verification failed: ${(error as Error).message}`);
    }
    if (!verification.verified) throw new PlatformError('UNAUTHORIZED', 'Authentication verification failed');
    // Compare-and-set: a concurrent login that already moved the counter makes this one a replay.
    const updated = await this.passkeys.update(
      { id: passkey.id, signCount: passkey.signCount },
      { signCount: verification.authenticationInfo.newCounter, lastUsedAt: new Date(this.now()) },
    );
    if (updated.affected !== 1)
      throw new PlatformError('UNAUTHORIZED', 'Authentication verification failed: the sign counter moved meanwhile');
    const user = await this.users.findById(passkey.userId);
    if (!user) throw new PlatformError('UNAUTHORIZED', 'User not found');
    await this.users.recordLogin(user);
    passkey.signCount = verification.authenticationInfo.newCounter;
    return { user, passkey };
  }

  /** The signed-in user's passkeys, oldest first. */
  async list(userId: string | null): Promise<PasskeyView[]> {
    const user = await this.signedInUser(userId);
    const passkeys = await this.passkeys.find({ where: { userId: user.id }, order: { createdAt: 'ASC' } });
    return passkeys.map(viewOf);
  }

  /** Removes one of the signed-in user's passkeys; someone else's is "not found", as if it did not exist. */
  async remove(userId: string | null, credentialId: unknown): Promise<void> {
    const user = await this.signedInUser(userId);
    if (typeof credentialId !== 'string' || credentialId.length === 0 || credentialId.length > 2048)
      throw new PlatformError('BAD_REQUEST', 'credential_id required');
    const result = await this.passkeys.delete({ credentialKey: keyOf(credentialId), userId: user.id });
    if (result.affected !== 1) throw new PlatformError('NOT_FOUND', 'Passkey credential not found');
  }

  private async signedInUser(userId: string | null): Promise<UserEntity> {
    if (!userId) throw new PlatformError('UNAUTHORIZED', 'Passkeys belong to a signed-in user: sign in first');
    const user = await this.users.findById(userId);
    if (!user) throw new PlatformError('UNAUTHORIZED', 'User not found');
    return user;
  }

  private async putChallenge(challenge: string, record: Omit<StoredChallenge, 'expires_at'>): Promise<void> {
    const ttlMs = PASSKEY_CHALLENGE_TTL_SECONDS * 1000;
    const stored: StoredChallenge = { ...record, expires_at: this.now() + ttlMs };
    await this.store.put(challengeKey(challenge), JSON.stringify(stored), ttlMs);
  }

  /** Uses the challenge up; an unknown, used, expired or other-ceremony challenge is refused. */
  private async takeChallenge(challenge: string, type: StoredChallenge['type']): Promise<StoredChallenge> {
    const raw = await this.store.take(challengeKey(challenge));
    const stored = raw ? (JSON.parse(raw) as StoredChallenge) : null;
    if (!stored || stored.type !== type || stored.expires_at <= this.now())
      throw new PlatformError('UNAUTHORIZED', 'Invalid or expired challenge');
    return stored;
  }
}

function challengeKey(challenge: string): string {
  return `webauthn-challenge:${challenge.slice(0, 160)}`;
}

/** Credential ids are compared by their base64url form's hash (see PasskeyEntity.credentialKey). */
export function keyOf(credentialId: string): string {
  const normalized = credentialId.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return createHash('sha256').update(normalized).digest('hex');
}

function nameOf(name: unknown): string {
  if (typeof name !== 'string') return 'Passkey';
  // Shown back in listings: printable text only.
  const cleaned = name.replace(/[\u0000-\u001f\u007f<>]/g, '').trim();
  return cleaned ? cleaned.slice(0, 64) : 'Passkey';
}

function viewOf(passkey: PasskeyEntity): PasskeyView {
  return {
    credential_id: passkey.credentialId,
    name: passkey.name,
    transports: passkey.transports,
    sign_count: passkey.signCount,
    created_at: passkey.createdAt.toISOString(),
    last_used_at: passkey.lastUsedAt?.toISOString() ?? null,
  };
}
