// Artifacts in Slack for every shape the relay accepts: line ranges however they were sent, as "10-20", inline contracts as
// pretty JSON, and artifacts of a type the relay does not know as a generic, escaped block of data.
import { renderArtifact } from '../../bot/blocks/artifacts';
import { artifactSchema } from '../../relay-core/domain/schemas';

const INBOX = 'https://relay.example/inbox/t1';
const shown = (sent: unknown) => renderArtifact(artifactSchema.parse(sent), INBOX);

test.each([
  ['"10-20"', '10-20', 'lines 10-20'],
  ['[10, 20]', [10, 20], 'lines 10-20'],
  ['"10"', '10', 'lines 10'],
  ['[10]', [10], 'lines 10'],
  ['[7, 7]', [7, 7], 'lines 7'],
  ['"007-010"', '007-010', 'lines 7-10'],
])('file_ref lines sent as %s read the same', (_name, lines, expected) => {
  expect(shown({ type: 'file_ref', path: 'a.ts', lines })).toBe(`:bookmark_tabs: *File* \`a.ts\` ${expected}`);
});

test('a git_sha that is a commit sha is shortened to 12 characters; a ref name is shown whole', () => {
  expect(shown({ type: 'file_ref', path: 'a.ts', git_sha: '0123456789abcdef0123' })).toBe(
    ':bookmark_tabs: *File* `a.ts` @ `0123456789ab`',
  );
  expect(shown({ type: 'file_ref', path: 'a.ts', git_sha: 'origin/feature-search-v2' })).toBe(
    ':bookmark_tabs: *File* `a.ts` @ `origin/feature-search-v2`',
  );
});

test('an inline contract given as JSON is shown as pretty JSON', () => {
  const text = shown({ type: 'api_contract', inline: { openapi: '3.1.0', paths: {} } })!;
  expect(text).toContain('"openapi": "3.1.0",\n  "paths": {}');
});

test('an artifact of an unknown type is a generic block: its type and its fields as data, escaped', () => {
  const text = shown({ type: 'screenshot', url: 'https://evil.example', caption: '<!channel> <@U123> look' })!;
  expect(text.startsWith(':package: *Artifact* `screenshot`\n```')).toBe(true);
  expect(text).toContain('"caption": "&lt;!channel&gt; &lt;@U123&gt; look"');
  expect(text).not.toMatch(/<!channel>|<@U123>/);
});

test('extra fields on a known type do not change how it is shown', () => {
  expect(shown({ type: 'link', url: 'https://example.com/pr/1', title: 'PR', description: '<!here>' })).toBe(
    shown({ type: 'link', url: 'https://example.com/pr/1', title: 'PR' }),
  );
});
