// A teammate's card from the command line's options, as `register` and `join` send it (lists comma-separated).

/** `a, b,,c` → `['a', 'b', 'c']`; absent stays absent. */
export const commaList = (v: string | undefined) =>
  v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

export interface CardOptions {
  handle?: string;
  name?: string;
  role?: string;
  skills?: string;
  repos?: string;
  tools?: string;
  lead?: string;
}

export function cardFromOptions(values: CardOptions) {
  return {
    handle: values.handle,
    name: values.name,
    role: values.role,
    skills: commaList(values.skills),
    repos_owned: commaList(values.repos),
    tools: commaList(values.tools),
    lead: values.lead,
  };
}
