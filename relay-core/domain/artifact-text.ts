// How artifact data that is not plain text reads as text, the same in Slack (bot/) and on the inbox page.
import {
  artifactExtras,
  isCommitSha,
  lineRangeBounds,
  type Artifact,
  type LineRange,
  type OtherArtifact,
} from './schemas';

/** An inline API contract: text as given, any other JSON value as pretty JSON. */
export function inlineContractText(inline: unknown): string {
  return typeof inline === 'string' ? inline : JSON.stringify(inline, null, 2);
}

/** The fields of an artifact of a type the relay does not know (all but `type`), as pretty JSON. */
export function otherArtifactText(artifact: OtherArtifact): string {
  return JSON.stringify(artifactExtras(artifact), null, 2);
}

/** Fields a client added to a known artifact, as pretty JSON; null when there are none. */
export function extraFieldsText(artifact: Artifact): string | null {
  const extras = artifactExtras(artifact);
  return Object.keys(extras).length ? JSON.stringify(extras, null, 2) : null;
}

/** A line range however it was sent ("007-010", [7, 10]) as people read it: "7-10", or "7" for one line. */
export function lineRangeText(lines: LineRange): string {
  const [start, end] = lineRangeBounds(lines);
  return start === end ? String(start) : `${start}-${end}`;
}

/** `file_ref.git_sha` as shown: a commit sha shortened to 12 characters, a ref name whole. */
export function gitRevisionText(revision: string): string {
  return isCommitSha(revision) ? revision.slice(0, 12) : revision;
}
