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
