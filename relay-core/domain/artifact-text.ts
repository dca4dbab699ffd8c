// How artifact data that is not plain text reads as text, the same in Slack (bot/) and on the inbox page.
import { artifactExtras, type Artifact, type OtherArtifact } from './schemas';

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
