import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function to64(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    out += ALPHABET[rest & 0x3f];
    rest >>>= 6;
  }
  return out;
}

/**
 * Apache's APR1 (MD5-crypt with the `$apr1$` magic), the htpasswd hash nginx's `auth_basic_user_file` reads on
 * every platform (bcrypt needs a libc that has it). The algorithm is Poul-Henning Kamp's md5crypt.
 */
export function apr1(password: string, salt = randomSalt()): string {
  const magic = '$apr1$';
  const cleanSalt = salt
    .replace(/^\$apr1\$/, '')
    .split('$')[0]
    .slice(0, 8);
  const pass = Buffer.from(password, 'utf8');
  const saltBytes = Buffer.from(cleanSalt, 'utf8');
  const md5 = (...parts: Buffer[]) => {
    const hash = createHash('md5');
    for (const part of parts) hash.update(part);
    return hash.digest();
  };

  const alternate = md5(pass, saltBytes, pass);
  const context: Buffer[] = [pass, Buffer.from(magic), saltBytes];
  for (let length = pass.length; length > 0; length -= 16) context.push(alternate.subarray(0, Math.min(16, length)));
  for (let bits = pass.length; bits > 0; bits >>= 1) context.push(bits & 1 ? Buffer.from([0]) : pass.subarray(0, 1));
  let final = md5(...context);

  for (let round = 0; round < 1000; round++) {
    const parts: Buffer[] = [];
    parts.push(round & 1 ? pass : final);
    if (round % 3) parts.push(saltBytes);
    if (round % 7) parts.push(pass);
    parts.push(round & 1 ? final : pass);
    final = md5(...parts);
  }

  const f = final;
  const encoded =
    to64((f[0] << 16) | (f[6] << 8) | f[12], 4) +
    to64((f[1] << 16) | (f[7] << 8) | f[13], 4) +
    to64((f[2] << 16) | (f[8] << 8) | f[14], 4) +
    to64((f[3] << 16) | (f[9] << 8) | f[15], 4) +
    to64((f[4] << 16) | (f[10] << 8) | f[5], 4) +
    to64(f[11], 2);
  return `${magic}${cleanSalt}$${encoded}`;
}

function randomSalt(): string {
  return [...randomBytes(8)].map((byte) => ALPHABET[byte & 0x3f]).join('');
}
