import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A software WebAuthn authenticator (ES256, attestation "none") for unit specs: it answers creation and request
 * options the way a browser and a platform authenticator would, in the web client's JSON shape (binary fields as
 * unpadded base64url). Chromium's virtual authenticator covers the browser path in the e2e suite.
 */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  /** The next assertion carries this counter plus one. */
  signCount = 0;
  userHandle: string | null = null;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.publicJwk = { x: jwk.x!, y: jwk.y! };
  }

  get id(): string {
    return this.credentialId.toString('base64url');
  }

  /** The answer to creation options (what `navigator.credentials.create` resolves to, as the client sends it). */
  create(
    options: { challenge: string; rp: { id?: string }; user: { id: string } },
    origin: string,
    overrides: { rpId?: string; userVerified?: boolean } = {},
  ): { id: string; rawId: string; type: string; response: { clientDataJSON: string; attestationObject: string } } {
    this.userHandle = options.user.id;
    const rpId = overrides.rpId ?? options.rp.id!;
    const coseKey = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(this.publicJwk.x, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(this.publicJwk.y, 'base64url'))],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      this.authDataHead(rpId, 0x40 | this.flags(overrides.userVerified), this.signCount),
      Buffer.alloc(16),
      idLength,
      this.credentialId,
      Buffer.from(isoCBOR.encode(coseKey)),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Map<string, string> | Uint8Array>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientData('webauthn.create', options.challenge, origin),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
      },
    };
  }

  /** The answer to request options (what `navigator.credentials.get` resolves to); the counter moves on by one. */
  get(
    options: { challenge: string; rpId?: string },
    origin: string,
    overrides: { rpId?: string; userHandle?: string | null; signCount?: number } = {},
  ): {
    id: string;
    rawId: string;
    type: string;
    response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle: string | null };
  } {
    this.signCount = overrides.signCount ?? this.signCount + 1;
    const authenticatorData = this.authDataHead(overrides.rpId ?? options.rpId!, this.flags(true), this.signCount);
    const clientDataJSON = clientData('webauthn.get', options.challenge, origin);
    const signature = sign(
      'sha256',
      Buffer.concat([
        authenticatorData,
        createHash('sha256').update(Buffer.from(clientDataJSON, 'base64url')).digest(),
      ]),
      this.privateKey,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON,
        authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: overrides.userHandle === undefined ? this.userHandle : overrides.userHandle,
      },
    };
  }

  /** User present, and verified unless told otherwise. */
  private flags(userVerified = true): number {
    return 0x01 | (userVerified ? 0x04 : 0);
  }

  private authDataHead(rpId: string, flags: number, signCount: number): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(signCount);
    return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flags]), counter]);
  }
}

function clientData(type: string, challenge: string, origin: string): string {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false })).toString('base64url');
}
