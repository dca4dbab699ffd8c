// What a "word" is for the web inbox's search (domain/search-terms.ts): what is typed, cut as the text index cuts
// what is written.
import { searchableText, searchTerms } from '../../relay-core/domain/search-terms';

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

test('punctuation separates words; one letter is no word; a long token is kept whole', () => {
  expect(searchTerms('user_id v2.1 a I x-ray')).toEqual(['user', 'id', 'v2', 'ray']);
  const hash = 'f'.repeat(64);
  expect(searchTerms(hash)).toEqual([hash]);
  expect(searchTerms('!! -- …')).toEqual([]);
  expect(searchTerms(null)).toEqual([]);
});

test('scripts other than Latin are words too; compatibility forms fold (ligatures, full-width)', () => {
  expect(searchTerms('Привет мир 東京 ﬁle ＡＰＩ')).toEqual(['привет', 'мир', '東京', 'file', 'api']);
  expect(searchableText('ﬁle ＡＰＩ Café Straße')).toBe('file API Cafe Straße');
});
