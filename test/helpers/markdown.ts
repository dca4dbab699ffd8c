// Reading the project's markdown as GitHub renders it, for the docs checks: headings and their anchors, links, tables.

/** The text outside fenced code blocks, with inline code spans kept (tables and headings need them). */
export function withoutFences(markdown: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && marker) fence = marker;
    else if (fence !== null && marker && marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    else if (fence === null) {
      out.push(line);
      continue;
    }
    out.push('');
  }
  return out.join('\n');
}

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation and symbols dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a file offers: its headings' slugs (a repeated one gets -1, -2, …) and explicit `<a id|name>` anchors. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = withoutFences(markdown);
  for (const line of text.split('\n')) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  return anchors;
}

export interface MarkdownLink {
  line: number;
  target: string;
}

/** Every link and image target outside code: inline `[text](target)` and reference definitions `[id]: target`. */
export function linksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  withoutFences(markdown)
    .split('\n')
    .forEach((raw, index) => {
      const line = raw.replace(/(`+)[^`][\s\S]*?\1/g, '');
      for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
        links.push({ line: index + 1, target: match[1]! });
      const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
      if (definition) links.push({ line: index + 1, target: definition[1]! });
    });
  return links;
}

/** The cells of a table row (`| a | b \| c |` → ['a', 'b \| c']); null for a line that is not one. */
export function tableCells(line: string): string[] | null {
  if (!/^\s*\|/.test(line)) return null;
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}
