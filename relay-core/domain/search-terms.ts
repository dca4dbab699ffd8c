// What a "word" is for the web inbox's text search (store/thread-terms.ts): the same rule cuts what is written and
// what is searched, so a word found in a summary is the word typed into the search box.
import type { MessageDoc, ThreadDoc } from './documents';

/** Shorter tokens ("a", "I") would match nearly every thread and tell nothing. */
export const MIN_TERM_LENGTH = 2;
/** Longer tokens (a hash, a base64 blob) are kept as their first this many characters, when written and searched. */
export const MAX_TERM_LENGTH = 40;
/** A search names at most this many words (each further word is one more lookup per page). */
export const MAX_QUERY_TERMS = 8;

/**
 * The distinct words of `text`: lower case, accents folded (NFKD, combining marks dropped: "Café" is "cafe"),
 * runs of letters and digits (anything else separates: "user_id" is "user" and "id", "v2.1" is "v2" and "1"),
 * at least MIN_TERM_LENGTH long, cut at MAX_TERM_LENGTH. No stemming and no prefixes: "page" does not find "pages".
 */
export function searchTerms(text: string | null | undefined): string[] {
  if (!text) return [];
  const folded = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  const terms = new Set<string>();
  for (const [token] of folded.matchAll(/[\p{L}\p{N}]+/gu)) {
    if ([...token].length < MIN_TERM_LENGTH) continue;
    terms.add([...token].slice(0, MAX_TERM_LENGTH).join(''));
  }
  return [...terms];
}

/** The words of what a thread says itself: summary, question, proposed action, and what was done once completed. */
export function threadTerms(
  thread: Pick<ThreadDoc, 'summary' | 'question' | 'proposed_action' | 'completed_summary'>,
): string[] {
  const action = thread.proposed_action;
  return searchTerms(
    [thread.summary, thread.question, action?.description, action?.rationale, thread.completed_summary]
      .filter(Boolean)
      .join('\n'),
  );
}

/** The words of one message. */
export function messageTerms(message: Pick<MessageDoc, 'body'>): string[] {
  return searchTerms(message.body);
}
