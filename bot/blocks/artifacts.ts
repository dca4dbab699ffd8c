// Artifacts as mrkdwn for the DM and thread replies: each fits the room it is given, teammate text escaped.
import {
  gitRevisionText,
  inlineContractText,
  lineRangeText,
  otherArtifactText,
} from '../../relay-core/domain/artifact-text';
import { isKnownArtifact, type Artifact } from '../../relay-core/domain/schemas';
import { section, textLength, type SlackBlock } from './block-kit';
import { escapeLine, fencedLines, inlineCode, link, urlHost } from './mrkdwn';

// Diffs and excerpts are cut on whole lines, with a link to the inbox for the rest; paths, titles and code are escaped.

/** The most one artifact may take: a section's 3000 characters, less a margin. */
export const ARTIFACT_MAX = 2400;
/** Below this much room an artifact is left to the inbox rather than shown as a stub. */
const MIN_CODE_ROOM = 120;

/** The longest link markup an artifact shows; past it (a huge or heavily encoded URL) the inbox has it. */
const MAX_LINK = 1800;

function fenced(
  headLine: string,
  code: string,
  room: number,
  cutNote: (lines: number, total: number) => string,
  inboxUrl: string,
): string | null {
  const note = cutNote(9999, 9999); // the longest the note can be
  const codeRoom = room - headLine.length - 1 - note.length - 1;
  if (codeRoom < MIN_CODE_ROOM) {
    // No room for the code itself: say what it is and where to read it.
    const stub = `${headLine}\n_Not shown here._ ${link(inboxUrl, 'Read it in the inbox')}`;
    return stub.length <= room ? stub : null;
  }
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
  if (!isKnownArtifact(artifact)) {
    // A type this relay does not know: its name and its fields as data, never interpreted.
    const headLine = `:package: *Artifact* ${inlineCode(artifact.type, 80)}`;
    text = fenced(
      headLine,
      otherArtifactText(artifact),
      Math.min(room, headLine.length + 1000),
      (lines, total) => `_Excerpt: ${lines} of ${total} lines._ ${link(inboxUrl, 'View it whole in the inbox')}`,
      inboxUrl,
    );
    return text !== null && text.length <= room ? text : null;
  }
  switch (artifact.type) {
    case 'file_diff':
      text = fenced(
        `:page_facing_up: *Diff* ${inlineCode(artifact.path, 300)}`,
        artifact.diff,
        room,
        (lines, total) => `_Diff shortened (${lines} of ${total} lines)._ ${link(inboxUrl, 'View the full diff')}`,
        inboxUrl,
      );
      break;
    case 'file_ref': {
      const lines = artifact.lines ? ` lines ${escapeLine(lineRangeText(artifact.lines), 40)}` : '';
      const sha = artifact.git_sha ? ` @ ${inlineCode(gitRevisionText(artifact.git_sha), 80)}` : '';
      text = `:bookmark_tabs: *File* ${inlineCode(artifact.path, 600)}${lines}${sha}`;
      break;
    }
    case 'test_command': {
      const cwd = artifact.cwd ? ` in ${inlineCode(artifact.cwd, 300)}` : '';
      const headLine = `:test_tube: *Test command*${cwd}`;
      text = fenced(
        headLine,
        artifact.command,
        Math.min(room, headLine.length + 1200),
        () => `_Command shortened._ ${link(inboxUrl, 'See it whole in the inbox')}`,
        inboxUrl,
      );
      break;
    }
    case 'api_contract': {
      const target = artifact.schema_url
        ? ` ${webLink(artifact.schema_url, shortUrl(artifact.schema_url), inboxUrl)}`
        : '';
      const headLine = `:scroll: *API contract*${target}`;
      const inline =
        artifact.inline === undefined || artifact.inline === null ? '' : inlineContractText(artifact.inline);
      text = inline
        ? fenced(
            headLine,
            inline,
            Math.min(room, headLine.length + 1000),
            (lines, total) => `_Excerpt: ${lines} of ${total} lines._ ${link(inboxUrl, 'View the whole contract')}`,
            inboxUrl,
          )
        : headLine;
      break;
    }
    case 'link': {
      const host = urlHost(artifact.url);
      const markup = link(artifact.url, artifact.title ?? shortUrl(artifact.url), 300);
      // The host is shown beside a titled link, so a title cannot pass off one site as another.
      text =
        markup.length <= MAX_LINK
          ? `:link: ${markup}${artifact.title && host ? ` (${escapeLine(host, 200)})` : ''}`
          : `:link: ${webLink(artifact.url, artifact.title ?? shortUrl(artifact.url), inboxUrl)}`;
      break;
    }
  }
  return text !== null && text.length <= room ? text : null;
}

/** A teammate's link; one too long to show whole is named, with its host, and left to the inbox. */
function webLink(url: string, label: string, inboxUrl: string): string {
  const markup = link(url, label, 300);
  if (markup.length <= MAX_LINK) return markup;
  const host = urlHost(url);
  return `${escapeLine(label, 300)}${host ? ` (${escapeLine(host, 200)})` : ''} ${link(inboxUrl, 'link in the inbox')}`;
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
export function artifactBlocks(
  artifacts: readonly Artifact[],
  inboxUrl: string,
  chars: number,
  maxBlocks: number,
): FilledArtifacts {
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
