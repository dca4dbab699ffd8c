// OAuth mode's install state: each /slack/install visit gets a random state kept in MongoDB, usable once, for ten minutes.
import { randomBytes } from 'node:crypto';
import type { InstallURLOptions, StateStore } from '@slack/bolt';
import type { Collection } from 'mongodb';

// Bolt's default state store signs the state but accepts it again until it expires; a replayed redirect must not install.

export const STATE_TTL_MS = 10 * 60_000;

export interface SlackOAuthStateDoc {
  _id: string;
  install_options: InstallURLOptions;
  created_at: Date;
}

export class InstallStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InstallStateError';
  }
}

export class MongoStateStore implements StateStore {
  constructor(private readonly docs: Collection<SlackOAuthStateDoc>) {}

  async generateStateParam(installOptions: InstallURLOptions, now: Date): Promise<string> {
    const state = randomBytes(24).toString('base64url');
    await this.docs.insertOne({ _id: state, install_options: installOptions, created_at: now });
    return state;
  }

  async verifyStateParam(now: Date, state: string): Promise<InstallURLOptions> {
    // Taken in one write: two redirects with the same state cannot both pass.
    const doc = await this.docs.findOneAndDelete({ _id: state });
    if (!doc) throw new InstallStateError('unknown or already used install state');
    if (now.getTime() - doc.created_at.getTime() > STATE_TTL_MS) throw new InstallStateError('install state expired');
    return doc.install_options;
  }
}
