// docs/configuration.md against the configuration schema (relay-core/ops/config.ts), both ways: every variable the
// relay, the CLI or the MCP server reads is in exactly one of its two tables with the schema's default, every
// documented variable is read, and the contributors' table holds exactly the test hooks and internal tuning.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { CONTRIBUTOR_SETTINGS, clientEnvSchema, envSchema } from '../../relay-core/ops/config';
import { tableCells, withoutFences } from '../helpers/markdown';

const PAGE = join(__dirname, '..', '..', 'docs', 'configuration.md');

interface DocumentedVariable {
  name: string;
  section: string;
  defaultCell: string;
}

/** The rows of every `| variable | default | … |` table, with the `## ` section each is under. */
function documentedVariables(markdown: string): DocumentedVariable[] {
  const rows: DocumentedVariable[] = [];
  let section = '';
  let inTable = false;
  for (const line of withoutFences(markdown).split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3).trim();
    const cells = tableCells(line);
    if (!cells) {
      inTable = false;
      continue;
    }
    if (cells[0] === 'variable' && cells[1] === 'default') inTable = true;
    else if (inTable && !/^-+$/.test(cells[0]!)) {
      for (const [, name] of cells[0]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g))
        rows.push({ name: name!, section, defaultCell: cells[1]! });
    }
  }
  return rows;
}

/** The schema's default of a variable, as its raw text (what an operator would write), or undefined when it has none. */
function schemaDefault(schema: z.ZodType): string | undefined {
  let node: any = schema;
  while (node) {
    const def = node._zod.def;
    if (def.type === 'default') return String(def.defaultValue);
    node = def.in ?? def.innerType;
  }
  return undefined;
}

const documented = documentedVariables(readFileSync(PAGE, 'utf8'));
const schemas: Record<string, z.ZodType> = { ...clientEnvSchema.shape, ...envSchema.shape };
const CONTRIBUTORS = 'For contributors: test hooks and internal tuning';

test('the page has both tables', () => {
  expect(new Set(documented.map((v) => v.section))).toEqual(new Set(['Settings', CONTRIBUTORS]));
});

test('every variable the schema reads is documented once, and every documented variable is read', () => {
  const names = documented.map((v) => v.name);
  expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  expect([...names].sort()).toEqual(Object.keys(schemas).sort());
});

test('the contributors table holds exactly the test hooks and internal tuning; the operators table the rest', () => {
  const contributors = documented.filter((v) => v.section === CONTRIBUTORS).map((v) => v.name);
  expect([...contributors].sort()).toEqual([...CONTRIBUTOR_SETTINGS].sort());
});

test('each documented default is the schema default', () => {
  const wrong = documented
    .map((v) => ({ ...v, expected: schemaDefault(schemas[v.name]!) }))
    .filter((v) => v.expected !== undefined && !v.defaultCell.includes(`\`${v.expected}\``))
    .map((v) => `${v.name}: documented ${v.defaultCell}, schema default \`${v.expected}\``);
  expect(wrong).toEqual([]);
});
