// What a "word" is for the web inbox's search (domain/search-terms.ts): the same rule for what is written and what
// is typed.
import { MAX_TERM_LENGTH, messageTerms, searchTerms, threadTerms } from '../../relay-core/domain/search-terms';

test('lower case, accents folded, letters and digits only, each word once', () => {
  expect(searchTerms('Le CAFÉ de Zoë: café, crêpes & Straße!')).toEqual([
    'le',
    'cafe',
    'de',
    'zoe',
    'crepes',
    'straße',
  ]);
});

test('punctuation separates words; one letter is no word; a long token is cut the same way it is searched', () => {
  expect(searchTerms('user_id v2.1 a I x-ray')).toEqual(['user', 'id', 'v2', 'ray']);
  const hash = 'f'.repeat(64);
  expect(searchTerms(hash)).toEqual(['f'.repeat(MAX_TERM_LENGTH)]);
  expect(searchTerms('!! -- …')).toEqual([]);
  expect(searchTerms(null)).toEqual([]);
});

test('scripts other than Latin are words too; compatibility forms fold (ligatures, full-width)', () => {
  expect(searchTerms('Привет мир 東京 ﬁle ＡＰＩ')).toEqual(['привет', 'мир', '東京', 'file', 'api']);
});

test('a thread’s words are its summary, question, proposed action and completion; a message’s its body', () => {
  expect(
    threadTerms({
      summary: 'Summary words',
      question: 'Question here?',
      proposed_action: { description: 'Rename column', target_files: ['a.ts'], rationale: 'Clarity' },
      completed_summary: 'Shipped',
    }),
  ).toEqual(['summary', 'words', 'question', 'here', 'rename', 'column', 'clarity', 'shipped']);
  expect(messageTerms({ body: 'On it, tomorrow.' })).toEqual(['on', 'it', 'tomorrow']);
});
