// Per-install development secrets under the data dir (owner-only files), used when the env does not set them.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';

export const ADMIN_KEY_FILE = 'admin-key';
export const PEPPER_FILE = 'key-pepper';

export async function readSecret(dataDir: string, file: string): Promise<string | undefined> {
  try {
    return (await readFile(join(dataDir, file), 'utf8')).trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Reads the secret, or generates one and stores it readable only by the owner. */
export async function ensureSecret(
  dataDir: string,
  file: string,
  prefix = '',
): Promise<{ value: string; created: boolean }> {
  const existing = await readSecret(dataDir, file);
  if (existing) return { value: existing, created: false };
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const value = `${prefix}${randomBytes(32).toString('base64url')}`;
  const path = join(dataDir, file);
  await writeFile(path, `${value}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  await chmod(path, 0o600);
  return { value: (await readSecret(dataDir, file))!, created: true };
}
