// Artifacts as mrkdwn: each fits the room it is given, cuts diffs and excerpts on whole lines with a link
// to the inbox, and renders teammate text (paths, titles, code) escaped.
import type { Artifact } from '../../relay-core/schemas';
import { section, textLength, type SlackBlock } from './block-kit';
import { escapeLine, fencedLines, inlineCode, link, urlHost } from './mrkdwn';

/** The most one artifact may take: a section's 3000 characters, less a margin. */
export const ARTIFACT_MAX = 2400;
/** Below this much room an artifact is left to the inbox rather than shown as a stub. */
const MIN_CODE_ROOM = 120;

function fenced(headLine: string, code: string, room: number, cutNote: (lines: number, total: number) => string): string | null {
  const note = cutNote(9999, 9999); // the longest the note can be
  const codeRoom = room - headLine.length - 1 - note.length - 1;
  if (codeRoom < MIN_CODE_ROOM) return null;
  const block = fencedLines(code, codeRoom);
  return `${headLine}\n${block.text}${block.cut ? `\n${cutNote(block.lines, block.totalLines)}` : ''}`;
}

/**
 * One artifact as mrkdwn of at most `room` characters, or null when it cannot be shown usefully in that room
 * (the caller then links to the inbox for it).
 */
export function renderArtifact(artifact: Artifact, inboxUrl: string, room: number = ARTIFACT_MAX): string | null {
  room = Math.min(room, ARTIFACT_MAX);
  let text: string | null;
  switch (artifact.type) {
    case 'file_diff':
      text = fenced(`:page_facing_up: *Diff* ${inlineCode(artifact.path, 300)}`, artifact.diff, room, (lines, total) =>
        `_Diff shortened (${lines} of ${total} lines)._ ${link(inboxUrl, 'View the full diff')}`,
      );
      break;
    case 'file_ref': {
      const lines = artifact.lines ? ` lines ${escapeLine(artifact.lines, 40)}` : '';
      const sha = artifact.git_sha ? ` @ ${inlineCode(artifact.git_sha.slice(0, 12), 14)}` : '';
      text = `:bookmark_tabs: *File* ${inlineCode(artifact.path, 600)}${lines}${sha}`;
      break;
    }
    case 'test_command': {
      const cwd = artifact.cwd ? ` in ${inlineCode(artifact.cwd, 300)}` : '';
      text = fenced(`:test_tube: *Test command*${cwd}`, artifact.command, Math.min(room, 1600), () =>
        `_Command shortened._ ${link(inboxUrl, 'See it whole in the inbox')}`,
      );
      break;
    }
    case 'api_contract': {
      const target = artifact.schema_url ? ` ${link(artifact.schema_url, shortUrl(artifact.schema_url))}` : '';
      const headLine = `:scroll: *API contract*${target}`;
      text = artifact.inline
        ? fenced(headLine, artifact.inline, Math.min(room, 1400), (lines, total) =>
            `_Excerpt: ${lines} of ${total} lines._ ${link(inboxUrl, 'View the whole contract')}`,
          )
        : headLine;
      break;
    }
    case 'link': {
      const host = urlHost(artifact.url);
      const label = artifact.title ? link(artifact.url, artifact.title, 300) : link(artifact.url, shortUrl(artifact.url));
      // The host is shown beside a titled link, so a title cannot pass off one site as another.
      text = `:link: ${label}${artifact.title && host ? ` (${escapeLine(host, 200)})` : ''}`;
      break;
    }
  }
  return text !== null && text.length <= room ? text : null;
}

/** A URL as a readable label: no scheme, at most 120 characters. */
function shortUrl(url: string): string {
  const bare = url.replace(/^https?:\/\//i, '');
  return bare.length > 120 ? `${bare.slice(0, 119)}…` : bare;
}

export interface FilledArtifacts {
  blocks: SlackBlock[];
  shown: number;
  chars: number;
}

/** As many artifacts as fit in `chars` characters and `maxBlocks` blocks, one section each, in order. */
export function artifactBlocks(artifacts: readonly Artifact[], inboxUrl: string, chars: number, maxBlocks: number): FilledArtifacts {
  const blocks: SlackBlock[] = [];
  let used = 0;
  for (const artifact of artifacts) {
    if (blocks.length >= maxBlocks) break;
    const text = renderArtifact(artifact, inboxUrl, chars - used);
    if (text === null) break;
    const block = section(text);
    blocks.push(block);
    used += textLength(block);
  }
  return { blocks, shown: blocks.length, chars: used };
}
