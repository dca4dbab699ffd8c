// Reads an MCP answer's provenance markers: the nonce it announces, and the answer with that nonce taken out so a
// test can compare the content as the pre-nonce marker format spelled it.

/** The answer without its provenance_nonce and without that nonce on its markers; unchanged when it announces none. */
export function withoutNonce<T>(answer: T): T {
  const nonce = (answer as { provenance_nonce?: unknown })?.provenance_nonce;
  if (nonce === undefined) return answer;
  expect(nonce).toMatch(/^[0-9a-f]{32}$/);
  const attribute = ` nonce="${nonce as string}"`;
  const strip = (value: unknown): unknown => {
    if (typeof value === 'string') return value.replaceAll(attribute, '');
    if (Array.isArray(value)) return value.map(strip);
    if (value && typeof value === 'object') {
      const entries = Object.entries(value).filter(([key]) => key !== 'provenance_nonce');
      const isMarker = 'source' in value && 'trusted' in value && (value as { nonce?: unknown }).nonce === nonce;
      return Object.fromEntries(
        entries.filter(([key]) => !(isMarker && key === 'nonce')).map(([key, item]) => [key, strip(item)]),
      );
    }
    return value;
  };
  return strip(answer) as T;
}
