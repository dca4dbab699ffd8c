// What a "word" is for the web inbox's text search (store/thread-text.ts): the text index cuts what is written into
// runs of letters and digits, ignoring case and accents; a search is the words typed, cut by the same rule.
/** Shorter tokens ("a", "I") would match nearly every thread and tell nothing. */
export const MIN_TERM_LENGTH = 2;
/** A search names at most this many words. */
export const MAX_QUERY_TERMS = 8;

/**
 * The distinct words of `text`: lower case, accents folded (NFKD, combining marks dropped: "Café" is "cafe"),
 * runs of letters and digits (anything else separates: "user_id" is "user" and "id", "v2.1" is "v2" and "1"),
 * at least MIN_TERM_LENGTH long. No stemming and no prefixes: "page" does not find "pages".
 */
export function searchTerms(text: string | null | undefined): string[] {
  if (!text) return [];
  const folded = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  const terms = new Set<string>();
  for (const [token] of folded.matchAll(/[\p{L}\p{N}]+/gu)) if ([...token].length >= MIN_TERM_LENGTH) terms.add(token);
  return [...terms];
}

/**
 * A text as the index is given it: compatibility forms and accents folded ("ﬁle" is "file", "ＡＰＩ" is "API",
 * "Café" is "Cafe"), as a search folds them, so that every engine's text index (some keep accents) finds them.
 */
export function searchableText(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '');
}
