// The secret store's cipher: AES-256-GCM with a key derived from PALAI_SECRET_KEY.
// Ciphertexts carry a version and their nonce, so the key can be rotated later.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export class SecretBox {
  private readonly key: Buffer;

  constructor(secret: string) {
    // Any length of operator-chosen secret becomes a 256-bit key.
    this.key = createHash('sha256').update(`palai-secret-box:${secret}`).digest();
  }

  seal(plaintext: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, nonce.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, nonce, tag, body] = sealed.split('.');
    if (version !== VERSION || !nonce || !tag || body === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}

export function secretBoxFrom(secretKey: string | null): SecretBox | null {
  return secretKey ? new SecretBox(secretKey) : null;
}
