// Slack listeners: the JSON a block builder put in a button value or a modal's private_metadata, read back for its schema.

/** The parsed value, or undefined when there is none or it is not JSON (the schema then refuses it). */
export function safeJson(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
