// Inbox links: the URL of a thread's inbox page, signed for one participant so the page needs no login.
import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../ops/api-keys';

function signature(secret: string, threadId: string, viewer: string): string {
  return createHmac('sha256', secret).update(`inbox_link\0${threadId}\0${viewer}`).digest('base64url');
}

/**
 * The thread's inbox page. With a viewer, the link carries a signature binding thread and viewer, so the page
 * can show that participant the whole thread without a login: it is as private as the DM or API answer it
 * arrives in. Without one, the page only explains where to read the thread.
 */
export function inboxUrl(publicUrl: string, secret: string, threadId: string, viewer?: string): string {
  const base = `${publicUrl}/inbox/${threadId}`;
  if (!viewer) return base;
  return `${base}?as=${encodeURIComponent(viewer)}&sig=${signature(secret, threadId, viewer)}`;
}

/** Whether `sig` is the signature this relay gave the link for `viewer` on `threadId`. */
export function isGenuineInboxLink(secret: string, threadId: string, viewer: string, sig: string): boolean {
  return constantTimeEqual(sig, signature(secret, threadId, viewer));
}

/** This relay's inbox links: its public base URL and the secret they are signed under. */
export class InboxLinks {
  constructor(
    /** The relay's public base URL (RELAY_PUBLIC_URL), without a trailing slash. */
    readonly publicUrl: string,
    private readonly secret: string,
  ) {}

  /** The thread's inbox page, signed for `viewer` when given. */
  url(threadId: string, viewer?: string): string {
    return inboxUrl(this.publicUrl, this.secret, threadId, viewer);
  }

  /** Whether `sig` is the signature this relay gave the link for `viewer` on `threadId`. */
  isGenuine(threadId: string, viewer: string, sig: string): boolean {
    return isGenuineInboxLink(this.secret, threadId, viewer, sig);
  }
}

/** What an inbox link names: its thread, and the viewer it is signed for (with the signature it carries). */
export interface InboxLinkTarget {
  threadId: string;
  viewer: string | null;
  signature: string | null;
}

const THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The thread an inbox URL of this relay points at, or null for any other URL (another host, path or a malformed id). */
export function parseInboxUrl(publicUrl: string, url: string): InboxLinkTarget | null {
  let parsed: URL;
  let base: URL;
  try {
    parsed = new URL(url);
    base = new URL(`${publicUrl}/`);
  } catch {
    return null;
  }
  if (parsed.origin !== base.origin || !parsed.pathname.startsWith(`${base.pathname}inbox/`)) return null;
  const threadId = parsed.pathname.slice(`${base.pathname}inbox/`.length).replace(/\/+$/, '');
  if (!THREAD_ID.test(threadId)) return null;
  return {
    threadId: threadId.toLowerCase(),
    viewer: parsed.searchParams.get('as'),
    signature: parsed.searchParams.get('sig'),
  };
}
