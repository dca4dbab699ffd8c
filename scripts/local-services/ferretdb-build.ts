// Local services: finds a working FerretDB 1.x binary, or builds 1.24.2 with Go, before FerretDB starts.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { errorMessage, findOnPath, isExecutable, run, type Log } from './child-process';

const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';
const FERRETDB_VERSION = 'v1.24.2';
/**
 * What our build reports as its version: 1.24.2 with the patches below, numbered (the relay refuses a build older
 * than it needs: store/mongo-store.ts) and followed by a hash of the patches themselves, so that a binary built from
 * other patches, even under the same number, is rebuilt (ferretDbBuild).
 */
const FERRETDB_BUILD_NUMBER = `${FERRETDB_VERSION}-handoff-relay.17`;
/** Installed under a name of its own, so a plain FerretDB someone else installed is left alone. */
const FERRETDB_BINARY = 'ferretdb-handoff-relay';

interface SourcePatch {
  /** What it is for, in the error when the source no longer holds `from`. */
  name: string;
  file: string;
  from: string;
  to: string;
  /** How many times the source holds `from`, every one replaced; unless said, the first is (it must be there). */
  count?: number;
}

/** Go files of our own (in ferretdb-patches/ beside this file's source), each copied into a package of FerretDB's. */
const FERRETDB_FILES: Array<{ name: string; dir: string }> = [
  { name: 'handler_write_locks.go', dir: path.join('internal', 'handler') },
  { name: 'sqlite_index_pushdown.go', dir: path.join('internal', 'backends', 'sqlite') },
  { name: 'metadata_multikey.go', dir: path.join('internal', 'backends', 'sqlite', 'metadata') },
  { name: 'sjson_decode.go', dir: path.join('internal', 'handler', 'sjson') },
  { name: 'sjson_schema_cache.go', dir: path.join('internal', 'handler', 'sjson') },
  { name: 'types_document_decoded.go', dir: path.join('internal', 'types') },
  { name: 'sjson_encode.go', dir: path.join('internal', 'handler', 'sjson') },
  { name: 'handler_projection_fields.go', dir: path.join('internal', 'handler') },
  { name: 'sqlite_fields.go', dir: path.join('internal', 'backends', 'sqlite') },
  { name: 'handler_text_search.go', dir: path.join('internal', 'handler') },
  { name: 'metadata_text_index.go', dir: path.join('internal', 'backends', 'sqlite', 'metadata') },
  { name: 'sqlite_text_search.go', dir: path.join('internal', 'backends', 'sqlite') },
  { name: 'handler_whole_documents.go', dir: path.join('internal', 'handler', 'common') },
  { name: 'metadata_sql_names.go', dir: path.join('internal', 'backends', 'sqlite', 'metadata') },
];

const SQLITE_COLLECTION = path.join('internal', 'backends', 'sqlite', 'collection.go');
const SQLITE_SETTINGS = path.join('internal', 'backends', 'sqlite', 'metadata', 'settings.go');
const SQLITE_REGISTRY = path.join('internal', 'backends', 'sqlite', 'metadata', 'registry.go');
/** Upstream's pushdown: a filter that is exactly `{ _id }` (in Query, then again in Explain). */
const UPSTREAM_ID_PUSHDOWN = (explain: boolean) =>
  '\tif params.Filter.Len() == 1 {\n' +
  '\t\tv, _ := params.Filter.Get("_id")\n' +
  '\t\tswitch v.(type) {\n' +
  '\t\tcase string, types.ObjectID:\n' +
  (explain ? '\t\t\tfilterPushdown = true\n' : '') +
  '\t\t\twhereClause = fmt.Sprintf(` WHERE %s = ?`, metadata.IDColumn)\n' +
  '\t\t\targs = []any{string(must.NotFail(sjson.MarshalSingleValue(v)))}\n' +
  '\t\t}\n' +
  '\t}\n';

const FERRETDB_PATCHES: SourcePatch[] = [
  /**
   * FerretDB 1.24's SQLite backend looks `_id` up as `_ferretdb_sjson->'$._id'` while its unique `_id` index is on
   * `_ferretdb_sjson->"_id"`: SQLite matches index expressions by their text, so every `_id` find, update and delete
   * read the whole table (a lookup of a missing `_id` in 1,000 threads took ~40 ms, growing with the table). The
   * same path written the index's way lets SQLite use the index.
   */
  {
    name: 'the _id index patch',
    file: path.join('internal', 'backends', 'sqlite', 'metadata', 'metadata.go'),
    from: `IDColumn = DefaultColumn + "->'$._id'"`,
    to: `IDColumn = DefaultColumn + "->'_id'"`,
  },
  /**
   * Every iterator, cursor and connection FerretDB makes is tracked for leak detection (internal/util/resource):
   * a pprof profile entry with the caller's stack and a finalizer, in release builds too, where a leak then panics
   * the server. Capturing those stacks was a measurable share of FerretDB's CPU on the relay's load
   * (docs/benchmarks.md, "Measurements behind the defaults"). Tracking stays on in FerretDB's debug builds, as
   * upstream meant it for.
   */
  ...(['Track', 'Untrack'] as const).map((fn) => ({
    name: `the release-build ${fn} patch`,
    file: path.join('internal', 'util', 'resource', 'resource.go'),
    from: `func ${fn}(obj any, token *Token) {\n\tcheckArgs(obj, token)\n`,
    to: `func ${fn}(obj any, token *Token) {\n\tif !debugbuild.Enabled {\n\t\treturn\n\t}\n\n\tcheckArgs(obj, token)\n`,
  })),
  /**
   * Atomic conditional writes (handler_write_locks.go): findAndModify, each statement of update and each of delete
   * hold their collection's lock from the read to the write.
   */
  {
    name: 'the atomic findAndModify patch',
    file: path.join('internal', 'handler', 'msg_findandmodify.go'),
    from: '\tvar qp backends.QueryParams\n\tif !h.DisablePushdown {\n\t\tqp.Filter = params.Query\n\t}\n',
    to:
      '\tdefer lockCollection(params.DB, params.Collection)()\n\n' +
      '\tvar qp backends.QueryParams\n\tif !h.DisablePushdown {\n\t\tqp.Filter = params.Query\n' +
      '\t\tqp.IndexSort = params.Sort\n\t\tqp.IndexLimit = 1\n\t}\n',
  },
  {
    name: 'the atomic update patch (lock)',
    file: path.join('internal', 'handler', 'msg_update.go'),
    from: '\t\tres, err := c.Query(ctx, &qp)\n\t\tif err != nil {\n\t\t\treturn 0, 0, nil, lazyerrors.Error(err)\n\t\t}\n',
    to:
      '\t\tunlock := lockCollection(params.DB, params.Collection)\n\n' +
      '\t\tres, err := c.Query(ctx, &qp)\n\t\tif err != nil {\n\t\t\tunlock()\n\t\t\treturn 0, 0, nil, lazyerrors.Error(err)\n\t\t}\n',
  },
  {
    name: 'the atomic update patch (unlock)',
    file: path.join('internal', 'handler', 'msg_update.go'),
    from: '\t\tresult, err := common.UpdateDocument(ctx, c, "update", iter, &u)\n',
    to: '\t\tresult, err := common.UpdateDocument(ctx, c, "update", iter, &u)\n\t\tunlock()\n\n',
  },
  /**
   * Each statement of an update releases its read when it is done, not when the whole command is: upstream defers
   * every statement's closer to the end of the command, and an updateOne that matched stops reading before its rows
   * are exhausted, so each held one of the database's 100 SQLite connections (pool/opendb.go) and its write needs one
   * more: a command of 100 statements waited forever for a connection, holding its collection's lock.
   */
  {
    name: 'the statement-by-statement update patch (no deferred close)',
    file: path.join('internal', 'handler', 'msg_update.go'),
    from: '\t\tcloser := iterator.NewMultiCloser()\n\t\tdefer closer.Close()\n',
    to: '\t\tcloser := iterator.NewMultiCloser()\n',
  },
  {
    name: 'the statement-by-statement update patch (close)',
    file: path.join('internal', 'handler', 'msg_update.go'),
    from: '\t\tresult, err := common.UpdateDocument(ctx, c, "update", iter, &u)\n',
    to: '\t\tresult, err := common.UpdateDocument(ctx, c, "update", iter, &u)\n\t\tcloser.Close()\n',
  },
  /**
   * An updateOne reads its document and releases the read's rows before it writes: the write's transaction then gets
   * the connection that read (database/sql hands back the most recently released), and so does the next command.
   * Upstream wrote while the read still held its connection, so every update took a second connection and the next
   * read went to the first, whose page cache SQLite throws away whenever another connection wrote.
   */
  {
    name: 'the read-then-write update patch',
    file: path.join('internal', 'handler', 'msg_update.go'),
    from: '\t\tif !u.Multi {\n\t\t\titer = common.LimitIterator(iter, closer, 1)\n\t\t}\n',
    to:
      '\t\tif !u.Multi {\n\t\t\titer = common.LimitIterator(iter, closer, 1)\n\n' +
      '\t\t\tvar docs []*types.Document\n\t\t\tif docs, err = iterator.ConsumeValues(iter); err != nil {\n' +
      '\t\t\t\tcloser.Close()\n\t\t\t\tunlock()\n\t\t\t\treturn 0, 0, nil, lazyerrors.Error(err)\n\t\t\t}\n\n' +
      '\t\t\titer = iterator.Values(iterator.ForSlice(docs))\n\t\t}\n',
  },
  {
    name: 'the atomic delete patch',
    file: path.join('internal', 'handler', 'msg_delete.go'),
    from: '\t\td, err = h.execDelete(connCtx, c, &p)\n',
    to: '\t\tunlock := lockCollection(params.DB, params.Collection)\n\t\td, err = h.execDelete(connCtx, c, &p)\n\t\tunlock()\n',
  },
  /**
   * Index pushdown (sqlite_index_pushdown.go, metadata_multikey.go): the handler hands the backend the find's sort
   * and limit (plus skip) beside its filter; the backend pushes down what the indexes serve; secondary indexes are
   * built on each field's SQL value; indexes are marked multikey when a field holds an array.
   */
  {
    name: 'the index pushdown patch (query params)',
    file: path.join('internal', 'backends', 'collection.go'),
    from: '\tFilter *types.Document\n\tSort   *types.Document\n\tLimit  int64\n',
    to:
      '\tFilter *types.Document\n\tSort   *types.Document\n\tLimit  int64\n\n' +
      '\t// IndexSort and IndexLimit: the whole sort, and the limit plus the skip; a backend applies them only where\n' +
      '\t// its indexes serve the whole filter and sort (the handler applies them again either way).\n' +
      '\tIndexSort  *types.Document\n\tIndexLimit int64\n\n' +
      '\t// Fields: the top-level fields the handler reads of each document; nil: all (sqlite_fields.go).\n' +
      '\tFields []string\n\n' +
      '\t// TextSearch: a $text search as an FTS5 query, which the backend always applies (handler_text_search.go).\n' +
      '\tTextSearch string\n',
  },
  {
    name: 'the index pushdown patch (find)',
    file: path.join('internal', 'handler', 'msg_find.go'),
    from: '\th.L.DebugContext(ctx, fmt.Sprintf("Converted %+v for %+v to %+v.", params, cInfo, qp))\n',
    to:
      '\tif !h.DisablePushdown {\n\t\tqp.IndexSort = params.Sort\n' +
      '\t\tqp.Fields = projectedFields(params.Projection, params.Filter, params.Sort)\n\n' +
      // Only while the backend sees the whole filter: without nested pushdown, dotted keys were taken out above.
      '\t\tif params.Limit > 0 && qp.Filter.Len() == params.Filter.Len() {\n\t\t\tqp.IndexLimit = params.Limit + params.Skip\n\t\t}\n\t}\n\n' +
      '\th.L.DebugContext(ctx, fmt.Sprintf("Converted %+v for %+v to %+v.", params, cInfo, qp))\n',
  },
  {
    name: 'the index pushdown patch (Query)',
    file: SQLITE_COLLECTION,
    from: UPSTREAM_ID_PUSHDOWN(false),
    to:
      '\tpushed := withTextSearch(meta, planPushdown(meta, params.Filter, params.IndexSort), params.TextSearch)\n' +
      '\ttail, tailArgs, _, _ := pushed.tail(params.Sort, params.Limit, params.IndexLimit)\n' +
      '\twhereClause, args = pushed.where+tail, append(pushed.args, tailArgs...)\n',
  },
  /** explain plans what find runs: the sort and the limit a find pushes down beside its filter are in its query plan. */
  {
    name: 'the index pushdown patch (explain params)',
    file: path.join('internal', 'backends', 'collection.go'),
    from: 'type ExplainParams struct {\n\tFilter *types.Document\n\tSort   *types.Document\n\tLimit  int64\n}',
    to:
      'type ExplainParams struct {\n\tFilter *types.Document\n\tSort   *types.Document\n\tLimit  int64\n\n' +
      '\t// IndexSort and IndexLimit: as in QueryParams.\n\tIndexSort  *types.Document\n\tIndexLimit int64\n}',
  },
  {
    name: 'the index pushdown patch (explain)',
    file: path.join('internal', 'handler', 'msg_explain.go'),
    from: '\tres, err := coll.Explain(connCtx, qp)\n',
    to:
      '\tif !h.DisablePushdown && !params.Aggregate {\n\t\tqp.IndexSort = params.Sort\n\n' +
      '\t\tif params.Limit > 0 && qp.Filter.Len() == params.Filter.Len() {\n\t\t\tqp.IndexLimit = params.Limit + params.Skip\n\t\t}\n\t}\n\n' +
      '\tres, err := coll.Explain(connCtx, qp)\n',
  },
  {
    name: 'the index pushdown patch (Explain)',
    file: SQLITE_COLLECTION,
    from: UPSTREAM_ID_PUSHDOWN(true),
    to:
      '\tpushed := planPushdown(meta, params.Filter, params.IndexSort)\n\tfilterPushdown = pushed.where != ""\n' +
      '\ttail, tailArgs, indexSorted, indexLimited := pushed.tail(params.Sort, params.Limit, params.IndexLimit)\n' +
      '\twhereClause, args = pushed.where+tail, append(pushed.args, tailArgs...)\n',
  },
  {
    name: 'the index pushdown patch (Explain result)',
    file: SQLITE_COLLECTION,
    from: '\t\tSortPushdown:   sortPushdown,\n\t\tLimitPushdown:  limitPushdown,\n',
    to: '\t\tSortPushdown:   sortPushdown || indexSorted,\n\t\tLimitPushdown:  limitPushdown || indexLimited,\n',
  },
  /**
   * Fields pushdown (sjson_decode.go, handler_projection_fields.go, sqlite_fields.go): a find whose projection,
   * filter and sort read a few top-level fields decodes only those of each stored document, and explain says so.
   */
  /** The fast sjson encoder (sjson_encode.go) answers Marshal, byte for byte; upstream's stays as its fallback. */
  {
    name: 'the fast encoder patch',
    file: path.join('internal', 'handler', 'sjson', 'sjson.go'),
    from: 'func Marshal(d *types.Document) ([]byte, error) {\n',
    to: 'func marshalSlow(d *types.Document) ([]byte, error) {\n',
  },
  /** The fast sjson decoder (sjson_decode.go) answers Unmarshal; upstream's stays as its fallback. */
  {
    name: 'the fast decoder patch',
    file: path.join('internal', 'handler', 'sjson', 'sjson.go'),
    from: 'func Unmarshal(data []byte) (*types.Document, error) {\n',
    to: 'func unmarshalSlow(data []byte) (*types.Document, error) {\n',
  },
  {
    name: 'the fields pushdown patch (iterator field)',
    file: path.join('internal', 'backends', 'sqlite', 'query_iterator.go'),
    from: '\tonlyRecordIDs bool\n}',
    to: '\tonlyRecordIDs bool\n\tfields        map[string]struct{} // nil: every field (sqlite_fields.go)\n}',
  },
  {
    name: 'the fields pushdown patch (decode)',
    file: path.join('internal', 'backends', 'sqlite', 'query_iterator.go'),
    from: '\t\tif doc, err = sjson.Unmarshal(b); err != nil {\n',
    to: '\t\tif doc, err = sjson.UnmarshalFields(b, iter.fields); err != nil {\n',
  },
  {
    name: 'the fields pushdown patch (Query)',
    file: SQLITE_COLLECTION,
    from: '\t\tIter: newQueryIterator(ctx, rows, params.OnlyRecordIDs),\n\t}, nil\n}\n\n// InsertAll',
    to: '\t\tIter: withFields(newQueryIterator(ctx, rows, params.OnlyRecordIDs), params.Fields),\n\t}, nil\n}\n\n// InsertAll',
  },
  {
    name: 'the fields pushdown patch (explain)',
    file: path.join('internal', 'handler', 'msg_explain.go'),
    from: '\t\t\t"limitPushdown", res.LimitPushdown,\n',
    to: '\t\t\t"limitPushdown", res.LimitPushdown,\n\t\t\t"projectionPushdown", explainProjectionPushdown(params.Command, params.Filter, params.Sort),\n',
  },
  {
    name: 'the multikey patch (insert)',
    file: SQLITE_COLLECTION,
    from: '\tmeta := c.r.CollectionGet(ctx, c.dbName, c.name)\n\n\terr := db.InTransaction(ctx, func(tx *fsql.Tx) error {\n\t\tbatchSize',
    to:
      '\tmeta := c.r.CollectionGet(ctx, c.dbName, c.name)\n\n' +
      '\tif names := multikeyIndexes(meta, params.Docs); len(names) > 0 {\n' +
      '\t\tif err := c.r.IndexesSetMultikey(ctx, c.dbName, c.name, names); err != nil {\n\t\t\treturn nil, lazyerrors.Error(err)\n\t\t}\n\t}\n\n' +
      '\terr := db.InTransaction(ctx, func(tx *fsql.Tx) error {\n\t\tbatchSize',
  },
  {
    name: 'the multikey patch (update)',
    file: SQLITE_COLLECTION,
    from: '\tq := fmt.Sprintf(`UPDATE %q SET %s = ? WHERE %s = ?`, meta.TableName, metadata.DefaultColumn, metadata.IDColumn)\n',
    to:
      '\tif names := multikeyIndexes(meta, params.Docs); len(names) > 0 {\n' +
      '\t\tif err := c.r.IndexesSetMultikey(ctx, c.dbName, c.name, names); err != nil {\n\t\t\treturn nil, lazyerrors.Error(err)\n\t\t}\n\t}\n\n' +
      '\tq := fmt.Sprintf(`UPDATE %q SET %s = ? WHERE %s = ?`, meta.TableName, metadata.DefaultColumn, metadata.IDColumn)\n',
  },
  {
    name: 'the multikey patch (create indexes)',
    file: SQLITE_COLLECTION,
    from: '\terr := c.r.IndexesCreate(ctx, c.dbName, c.name, indexes)\n\tif err != nil {\n\t\treturn nil, lazyerrors.Error(err)\n\t}\n',
    to:
      '\terr := c.r.IndexesCreate(ctx, c.dbName, c.name, indexes)\n\tif err != nil {\n\t\treturn nil, lazyerrors.Error(err)\n\t}\n\n' +
      '\tif err = c.markMultikeyOnCreate(ctx, indexes); err != nil {\n\t\treturn nil, lazyerrors.Error(err)\n\t}\n',
  },
  {
    name: 'the multikey patch (index settings)',
    file: SQLITE_SETTINGS,
    from: '\tUnique bool           `json:"unique"`\n}',
    to: '\tUnique bool           `json:"unique"`\n\t// Multikey: a field of the index holds an array in some document (metadata_multikey.go).\n\tMultikey bool `json:"multikey,omitempty"`\n}',
  },
  {
    name: 'the multikey patch (settings copy)',
    file: SQLITE_SETTINGS,
    from: '\t\t\tUnique: index.Unique,\n\t\t}',
    to: '\t\t\tUnique: index.Unique,\n\t\t\tMultikey: index.Multikey,\n\t\t}',
  },
  /**
   * A client's index names and key fields go into SQL quoted as SQL quotes them (metadata_sql_names.go): upstream's %q
   * let a double quote in either end the identifier and run the rest as SQL. (The DROP INDEX is in the text index
   * patch below, which rewrites that line.)
   */
  {
    name: 'the SQL names patch (index name)',
    file: SQLITE_REGISTRY,
    from: '\t\tq += "INDEX %q ON %q (%s)"\n',
    to: '\t\tq += "INDEX %s ON %q (%s)"\n',
  },
  {
    name: 'the SQL names patch (index name argument)',
    file: SQLITE_REGISTRY,
    from: '\t\t\tc.TableName+"_"+index.Name,\n',
    to: '\t\t\tsqlIdent(c.TableName+"_"+index.Name),\n',
  },
  {
    name: 'the SQL names patch (key fields)',
    file: SQLITE_REGISTRY,
    from: '\t\t\t\tfields[j] = fmt.Sprintf("%q", f)\n',
    to: '\t\t\t\tfields[j] = sqlIdent(f)\n',
  },
  {
    name: 'the index column patch',
    file: SQLITE_REGISTRY,
    from: '\t\t\tcolumns[i] = fmt.Sprintf("%s->%s", DefaultColumn, strings.Join(fields, "->"))\n',
    to: '\t\t\tcolumns[i] = indexColumn(key.Field, fields, len(index.Key))\n',
  },
  /**
   * Text indexes (handler_text_search.go, metadata_text_index.go, sqlite_text_search.go): `createIndex({ f: 'text' })`
   * builds an FTS5 table kept by triggers, and a find's `$text` is one more pushed-down condition.
   */
  {
    name: 'the text index patch (index info)',
    file: path.join('internal', 'backends', 'collection.go'),
    from: 'type IndexInfo struct {\n\tName   string\n\tKey    []IndexKeyPair\n\tUnique bool\n}',
    to:
      'type IndexInfo struct {\n\tName   string\n\tKey    []IndexKeyPair\n\tUnique bool\n\n' +
      '\t// Text: the fields of a text index (handler_text_search.go), whose Key is then _fts, _ftsx.\n\tText []string\n}',
  },
  {
    name: 'the text index patch (index key)',
    file: path.join('internal', 'handler', 'msg_createindexes.go'),
    from: '\t\tindex.Key, err = processIndexKey(command, keyDoc)\n\t\tif err != nil {\n\t\t\treturn nil, err\n\t\t}\n',
    to:
      '\t\tvar isText bool\n\t\tif index.Key, index.Text, isText, err = textIndexKey(command, keyDoc); err != nil {\n' +
      '\t\t\treturn nil, err\n\t\t}\n\n\t\tif !isText {\n' +
      '\t\t\tif index.Key, err = processIndexKey(command, keyDoc); err != nil {\n\t\t\t\treturn nil, err\n\t\t\t}\n\t\t}\n',
  },
  {
    name: 'the text index patch (index options)',
    file: path.join('internal', 'handler', 'msg_createindexes.go'),
    from:
      '\t\tcase "partialFilterExpression", "expireAfterSeconds", "hidden", "storageEngine",\n' +
      '\t\t\t"weights", "default_language", "language_override", "textIndexVersion", "2dsphereIndexVersion",\n',
    to:
      '\t\tcase "weights", "default_language", "language_override", "textIndexVersion":\n' +
      '\t\t\tif err = textIndexOption(command, indexDoc, &index, opt); err != nil {\n\t\t\t\treturn nil, err\n\t\t\t}\n\n' +
      '\t\tcase "partialFilterExpression", "expireAfterSeconds", "hidden", "storageEngine",\n' +
      '\t\t\t"2dsphereIndexVersion",\n',
  },
  {
    name: 'the text index patch (listIndexes)',
    file: path.join('internal', 'handler', 'msg_listindexes.go'),
    from: '\t\tfirstBatch.Append(indexDoc)\n',
    to: '\t\taddTextIndexFields(indexDoc, index.Text)\n\t\tfirstBatch.Append(indexDoc)\n',
  },
  {
    name: 'the text index patch (find)',
    file: path.join('internal', 'handler', 'msg_find.go'),
    from: '\tqp, err := h.makeFindQueryParams(connCtx, params, &cInfo)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n',
    to:
      '\ttextSearch, err := takeTextSearch(connCtx, coll, params)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\n' +
      '\tqp, err := h.makeFindQueryParams(connCtx, params, &cInfo)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\n' +
      '\tqp.TextSearch = textSearch\n',
  },
  {
    name: 'the text index patch (create)',
    file: SQLITE_COLLECTION,
    from:
      '\t\tindexes[i] = metadata.IndexInfo{\n\t\t\tName:   index.Name,\n' +
      '\t\t\tKey:    make([]metadata.IndexKeyPair, len(index.Key)),\n\t\t\tUnique: index.Unique,\n',
    to:
      '\t\tindexes[i] = metadata.IndexInfo{\n\t\t\tName:   index.Name,\n' +
      '\t\t\tKey:    make([]metadata.IndexKeyPair, len(index.Key)),\n\t\t\tUnique: index.Unique,\n\t\t\tText: index.Text,\n',
  },
  {
    name: 'the text index patch (list)',
    file: SQLITE_COLLECTION,
    from:
      '\t\tres.Indexes[i] = backends.IndexInfo{\n\t\t\tName:   index.Name,\n\t\t\tUnique: index.Unique,\n' +
      '\t\t\tKey:    make([]backends.IndexKeyPair, len(index.Key)),\n',
    to:
      '\t\tres.Indexes[i] = backends.IndexInfo{\n\t\t\tName:   index.Name,\n\t\t\tUnique: index.Unique,\n' +
      '\t\t\tKey:    make([]backends.IndexKeyPair, len(index.Key)),\n\t\t\tText: index.Text,\n',
  },
  {
    name: 'the text index patch (index settings)',
    file: SQLITE_SETTINGS,
    from: '\tMultikey bool `json:"multikey,omitempty"`\n}',
    to: '\tMultikey bool `json:"multikey,omitempty"`\n\t// Text: the fields of a text index (metadata_text_index.go).\n\tText []string `json:"text,omitempty"`\n}',
  },
  {
    name: 'the text index patch (settings copy)',
    file: SQLITE_SETTINGS,
    from: '\t\t\tMultikey: index.Multikey,\n',
    to: '\t\t\tMultikey: index.Multikey,\n\t\t\tText: slices.Clone(index.Text),\n',
  },
  /**
   * A multikey index of one top-level field keeps a table of its elements (metadata_multikey.go), made as the index is
   * marked multikey and dropped with the index or its collection.
   */
  {
    name: 'the multikey elements patch (index settings)',
    file: SQLITE_SETTINGS,
    from: '\tText []string `json:"text,omitempty"`\n}',
    to: '\tText []string `json:"text,omitempty"`\n\t// ElementsTable: the table of the index\'s field\'s elements (metadata_multikey.go).\n\tElementsTable string `json:"elementsTable,omitempty"`\n}',
  },
  {
    name: 'the multikey elements patch (settings copy)',
    file: SQLITE_SETTINGS,
    from: '\t\t\tText: slices.Clone(index.Text),\n',
    to: '\t\t\tText: slices.Clone(index.Text),\n\t\t\tElementsTable: index.ElementsTable,\n',
  },
  {
    name: 'the text index patch (registry create)',
    file: SQLITE_REGISTRY,
    from: '\t\tq := "CREATE "\n\n\t\tif index.Unique {\n',
    to:
      '\t\tif len(index.Text) > 0 {\n\t\t\tif err := createTextIndex(ctx, db, c.TableName, index.Text); err != nil {\n' +
      '\t\t\t\t_ = r.indexesDrop(ctx, dbName, collectionName, created)\n\t\t\t\treturn lazyerrors.Error(err)\n\t\t\t}\n\n' +
      '\t\t\tcreated = append(created, index.Name)\n\t\t\tc.Settings.Indexes = append(c.Settings.Indexes, index)\n\n' +
      '\t\t\tcontinue\n\t\t}\n\n\t\tq := "CREATE "\n\n\t\tif index.Unique {\n',
  },
  {
    name: 'the text index patch (registry drop index)',
    file: SQLITE_REGISTRY,
    from: '\t\tq := fmt.Sprintf("DROP INDEX %q", c.TableName+"_"+name)\n',
    to:
      '\t\tq := "DROP INDEX " + sqlIdent(c.TableName+"_"+name)\n' +
      '\t\tif len(c.Settings.Indexes[i].Text) > 0 {\n\t\t\tq = dropTextIndexSQL(c.TableName)\n\t\t}\n' +
      '\t\tq += ";" + dropElementsSQL(c.Settings.Indexes[i])\n',
  },
  {
    name: 'the text index patch (registry drop collection)',
    file: SQLITE_REGISTRY,
    from: '\tq = fmt.Sprintf("DROP TABLE %q", c.TableName)\n',
    to: '\tq = fmt.Sprintf("DROP TABLE %q; %s", c.TableName, dropIndexTablesSQL(c))\n',
  },
  /**
   * A find without a projection answers with its documents as read (upstream copied each twice to apply the empty
   * projection: a tenth of an `_id` find's CPU), unless a document's `_id` is not its first field, which the
   * projection still puts first.
   */
  {
    name: 'the whole documents patch',
    file: path.join('internal', 'handler', 'common', 'projection_iterator.go'),
    from: '\tprojectionValidated, inclusion, err := ValidateProjection(projection)\n',
    to:
      '\tif projection.Len() == 0 {\n\t\tres := &wholeDocumentsIterator{iter: iter, filter: filter}\n\t\tcloser.Add(res)\n\n' +
      '\t\treturn res, nil\n\t}\n\n\tprojectionValidated, inclusion, err := ValidateProjection(projection)\n',
  },
];

/** A module FerretDB depends on, built from its source with patches and files of ours in place of the one go.mod names. */
interface PatchedModule {
  module: string;
  version: string;
  /** Go files of ours (in ferretdb-patches/), each copied into a package of the module (`dir`, its root if none). */
  files: Array<{ name: string; dir?: string }>;
  patches: SourcePatch[];
}

/** The musl C functions of modernc.org/libc that ours replace (libc_mem.go), renamed in its translated source for `arch`. */
const MUSL_RENAMES = (arch: string): SourcePatch[] =>
  ['memcpy', 'memcmp'].map((name) => ({
    name: `the memory functions patch (${name}, ${arch})`,
    file: `ccgo_linux_${arch}.go`,
    from: `\nfunc X${name}(tls *TLS, `,
    to: `\nfunc musl${name[0]!.toUpperCase()}${name.slice(1)}(tls *TLS, `,
  }));

const PATCHED_MODULES: PatchedModule[] = [
  /**
   * FerretDB's wire protocol: a message FerretDB builds (every reply) is no longer decoded again, whole, to look for
   * NaN, as every message it reads still is (upstream did both because FerretDB sets CheckNaNs; a reply holds only
   * what a checked message stored or what FerretDB made): 6% of an `_id` find's CPU, and of every page's.
   */
  {
    module: 'github.com/FerretDB/wire',
    version: 'v0.0.8',
    files: [],
    patches: [
      {
        name: 'the unchecked replies patch',
        file: 'op_msg.go',
        from: '\tmsg.sections = sections\n\n\tif Debug || CheckNaNs {\n',
        to: '\tmsg.sections = sections\n\n\tif Debug {\n',
      },
    ],
  },
  /**
   * FerretDB's SQLite driver, with a statement cache of ours (ferretdb-patches/sqlite_stmt_cache.go: the driver
   * prepared and finalized every statement on every run) and each WAL frame written at once (sqlite_wal_frame.go).
   */
  {
    module: 'modernc.org/sqlite',
    version: 'v1.32.0',
    files: [{ name: 'sqlite_stmt_cache.go' }, { name: 'sqlite_wal_frame.go', dir: 'lib' }],
    patches: [
      {
        name: 'the statement cache patch (connection)',
        file: 'sqlite.go',
        from: '\twriteTimeFormat string\n\tbeginMode       string\n}',
        to: '\twriteTimeFormat string\n\tbeginMode       string\n\n\t// cache: statements kept for the next run of their text (sqlite_stmt_cache.go).\n\tcache stmtCache\n}',
      },
      {
        name: 'the statement cache patch (prepare)',
        file: 'sqlite.go',
        from: 's.c.prepareV2(&psql)',
        to: 's.c.prepareCached(&psql)',
        count: 2,
      },
      {
        name: 'the statement cache patch (finalize)',
        file: 'sqlite.go',
        from: 's.c.finalize(pstmt)',
        to: 's.c.release(pstmt)',
        count: 4,
      },
      {
        name: 'the statement cache patch (rows)',
        file: 'sqlite.go',
        from: '\treturn r.c.finalize(r.pstmt)\n',
        to: '\treturn r.c.release(r.pstmt)\n',
      },
      {
        name: 'the statement cache patch (close)',
        file: 'sqlite.go',
        from: '\tif c.db != 0 {\n\t\tif err := c.closeV2(c.db); err != nil {',
        to: '\tc.finalizeIdle()\n\n\tif c.db != 0 {\n\t\tif err := c.closeV2(c.db); err != nil {',
      },
      ...['amd64', 'arm64'].map((arch) => ({
        name: `the one-write WAL frame patch (${arch})`,
        file: path.join('lib', `sqlite_linux_${arch}.go`),
        from: '\nfunc _walWriteOneFrame(tls *libc.TLS, ',
        to: '\nfunc _walWriteOneFrameUpstream(tls *libc.TLS, ',
      })),
    ],
  },
  /**
   * The C library SQLite runs on, translated to Go: its memcpy moved 4 bytes at a time and its memcmp compared one
   * byte at a time; ours are Go's own (libc_mem.go). SQLite copies a document's JSON text for every index expression
   * it evaluates, so these were a fifth of FerretDB's CPU in an update.
   */
  {
    module: 'modernc.org/libc',
    version: 'v1.55.3',
    files: [{ name: 'libc_mem.go' }],
    patches: [...MUSL_RENAMES('amd64'), ...MUSL_RENAMES('arm64')],
  },
  /**
   * The allocator behind SQLite's malloc: a block of more than a few bytes lives in a 1 MiB region mapped for its
   * size class, and a region whose last block was freed was unmapped — so one large buffer allocated and freed, as
   * SQLite does for each document it reads, cost an mmap, one or two munmaps and fresh zeroed pages every time. The
   * emptied region is now kept as its class's region to allocate from, when the class has none (one per class).
   */
  {
    module: 'modernc.org/memory',
    version: 'v1.8.0',
    files: [],
    patches: [
      {
        name: 'the allocator patch (keep an emptied region)',
        file: 'memory.go',
        from:
          '\tif a.pages[log] == pg {\n\t\ta.pages[log] = 0\n\t}\n\tif counters {\n' +
          '\t\ta.Bytes -= (*page)(unsafe.Pointer(pg)).size\n\t}\n\treturn a.unmap(pg)\n',
        to:
          '\tif a.pages[log] == 0 || a.pages[log] == pg {\n' +
          "\t\t// handoff-relay: kept as the class's region to allocate from, all of it free again.\n" +
          '\t\t(*page)(unsafe.Pointer(pg)).brk = 0\n\t\ta.pages[log] = pg\n\t\treturn nil\n\t}\n\tif counters {\n' +
          '\t\ta.Bytes -= (*page)(unsafe.Pointer(pg)).size\n\t}\n\treturn a.unmap(pg)\n',
      },
    ],
  },
];

let ferretDbBinary: Promise<string> | undefined;

/**
 * Absolute path to a working FerretDB 1.x binary, building 1.24.2 with Go on first use.
 *
 * A plain `go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2` produces a binary that
 * panics at start-up ("Invalid build/version/version.txt file content"): the module zip lacks that
 * generated file. So every candidate is checked with `--version`, and the build copies the module
 * source, writes version.txt (as FerretDB's own message asks) and runs `go build`.
 */
export async function ensureFerretDbBinary(log: Log): Promise<string> {
  ferretDbBinary ??= locateOrBuildFerretDb(log).catch((err: unknown) => {
    ferretDbBinary = undefined; // let a later call try again
    throw err;
  });
  return ferretDbBinary;
}

async function locateOrBuildFerretDb(log: Log): Promise<string> {
  const go = await findGo();
  const goDirs = go ? await goInstallDirs(go) : [];
  const candidates = unique([
    await findOnPath(FERRETDB_BINARY, process.env.PATH),
    ...goDirs.map((dir) => path.join(dir, FERRETDB_BINARY)),
    `/root/go/bin/${FERRETDB_BINARY}`,
  ]);

  const rejected: string[] = [];
  for (const candidate of candidates) {
    if (!(await isExecutable(candidate))) continue;
    const problem = await checkFerretDb(candidate);
    if (!problem) return candidate;
    rejected.push(`${candidate}: ${problem}`);
  }

  if (!go) {
    throw new Error(
      'FerretDB is not installed and `go` was not found: install Go 1.24+ (https://go.dev/dl/) ' +
        'or set MONGODB_URL to a MongoDB server.' +
        (rejected.length ? `\nUnusable ferretdb binaries: ${rejected.join('; ')}` : ''),
    );
  }

  log(
    `Installing FerretDB ${FERRETDB_VERSION.slice(1)} with Go (first run only, takes a few minutes)…` +
      (rejected.length ? ` (skipping ${rejected.join('; ')})` : ''),
  );
  const installDir = goDirs[0];
  if (!installDir) throw new Error(`\`${go} env GOBIN GOPATH\` gave no install directory`);
  return buildFerretDb(go, installDir);
}

async function buildFerretDb(go: string, installDir: string): Promise<string> {
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferretdb-build-'));
  try {
    const download = await run(go, ['mod', 'download', '-json', `${FERRETDB_MODULE}@${FERRETDB_VERSION}`], {
      cwd: workDir,
    });
    const moduleDir = (JSON.parse(download) as { Dir?: string }).Dir;
    if (!moduleDir) throw new Error(`\`go mod download\` did not report a directory for ${FERRETDB_MODULE}`);

    // The module cache is read-only: build from a writable copy that has the version file.
    const srcDir = path.join(workDir, 'src');
    await fs.cp(moduleDir, srcDir, { recursive: true });
    await makeWritable(srcDir);
    await fs.writeFile(path.join(srcDir, 'build', 'version', 'version.txt'), `${await ferretDbBuild()}\n`);
    const ours = await patchesDir();
    for (const file of FERRETDB_FILES)
      await fs.copyFile(path.join(ours, file.name), path.join(srcDir, file.dir, file.name));
    await applyPatches(srcDir, FERRETDB_PATCHES);

    // The modules we patch, each from its source with our patches, in place of the one FerretDB's go.mod names.
    const goMod = await fs.readFile(path.join(srcDir, 'go.mod'), 'utf8');
    for (const dep of PATCHED_MODULES) {
      if (!goMod.includes(`\t${dep.module} ${dep.version}\n`) && !goMod.includes(`\t${dep.module} ${dep.version} //`))
        throw new Error(`FerretDB's go.mod no longer requires ${dep.module} ${dep.version}`);
      const depDownload = await run(go, ['mod', 'download', '-json', `${dep.module}@${dep.version}`], { cwd: workDir });
      const depSource = (JSON.parse(depDownload) as { Dir?: string }).Dir;
      if (!depSource) throw new Error(`\`go mod download\` did not report a directory for ${dep.module}`);
      const depDir = path.join(workDir, 'deps', dep.module);
      await fs.cp(depSource, depDir, { recursive: true });
      await makeWritable(depDir);
      for (const file of dep.files)
        await fs.copyFile(path.join(ours, file.name), path.join(depDir, file.dir ?? '', file.name));
      await applyPatches(depDir, dep.patches);
      await run(go, ['mod', 'edit', `-replace=${dep.module}=${depDir}`], { cwd: srcDir });
    }

    const built = path.join(workDir, 'ferretdb');
    await run(go, ['build', '-buildvcs=false', '-o', built, './cmd/ferretdb'], { cwd: srcDir });

    // Copy next to the target, then rename: a concurrent run never sees a half-written binary.
    await fs.mkdir(installDir, { recursive: true });
    const target = path.join(installDir, FERRETDB_BINARY);
    const partial = `${target}.partial-${process.pid}`;
    await fs.copyFile(built, partial);
    await fs.chmod(partial, 0o755);
    await fs.rename(partial, target);

    const problem = await checkFerretDb(target);
    if (problem) throw new Error(`the freshly built ${target} does not run: ${problem}`);
    return target;
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

/** Returns why the binary is unusable, or undefined when it is a runnable FerretDB 1.x. */
async function checkFerretDb(bin: string): Promise<string | undefined> {
  try {
    const out = await run(bin, ['--version'], { timeoutMs: 15_000 });
    const version = /^version:\s*(\S+)/m.exec(out)?.[1] ?? 'unknown';
    // FerretDB 2 needs PostgreSQL with DocumentDB; this project runs 1.x on SQLite.
    if (/^v?([2-9]|\d{2,})\./.test(version)) return `version ${version} has no SQLite handler (need 1.x)`;
    const build = await ferretDbBuild();
    if (version !== build) return `version ${version} is not ${build} (the build with its patches)`;
    return undefined;
  } catch (err) {
    return firstLine(errorMessage(err));
  }
}

/** Applies each patch to its file under `dir`, or fails naming the patch whose lines the source no longer holds. */
async function applyPatches(dir: string, patches: readonly SourcePatch[]): Promise<void> {
  for (const patch of patches) {
    const file = path.join(dir, patch.file);
    const source = await fs.readFile(file, 'utf8');
    const found = source.split(patch.from).length - 1;
    if (patch.count === undefined ? found === 0 : found !== patch.count)
      throw new Error(`${patch.file} no longer holds the lines ${patch.name} replaces`);
    await fs.writeFile(
      file,
      patch.count === undefined ? source.replace(patch.from, patch.to) : source.split(patch.from).join(patch.to),
    );
  }
}

/** FERRETDB_BUILD_NUMBER and a hash of every patch (the replacements and our Go files): the version our build reports. */
async function ferretDbBuild(): Promise<string> {
  const hash = createHash('sha256').update(JSON.stringify([FERRETDB_PATCHES, PATCHED_MODULES]));
  const dir = await patchesDir();
  for (const file of FERRETDB_FILES) hash.update(file.name).update(await fs.readFile(path.join(dir, file.name)));
  for (const { name } of PATCHED_MODULES.flatMap((dep) => dep.files))
    hash.update(name).update(await fs.readFile(path.join(dir, name)));
  return `${FERRETDB_BUILD_NUMBER}+${hash.digest('hex').slice(0, 12)}`;
}

/** ferretdb-patches/ beside this file's source: from scripts/local-services (tests) or dist/scripts/local-services. */
async function patchesDir(): Promise<string> {
  const candidates = [
    path.join(__dirname, 'ferretdb-patches'),
    path.join(__dirname, '..', '..', '..', 'scripts', 'local-services', 'ferretdb-patches'),
  ];
  for (const dir of candidates) {
    if (
      await fs.stat(dir).then(
        (st) => st.isDirectory(),
        () => false,
      )
    )
      return dir;
  }
  throw new Error(`FerretDB's patch files are missing (looked in ${candidates.join(', ')})`);
}

async function findGo(): Promise<string | undefined> {
  const onPath = await findOnPath('go', process.env.PATH);
  if (onPath) return onPath;
  const usual = '/usr/local/go/bin/go';
  return (await isExecutable(usual)) ? usual : undefined;
}

/** Where `go install` puts binaries: GOBIN, else the first GOPATH entry's bin. */
async function goInstallDirs(go: string): Promise<string[]> {
  const out = await run(go, ['env', 'GOBIN', 'GOPATH']);
  const [gobin = '', gopath = ''] = out.split('\n').map((line) => line.trim());
  const dirs = gopath
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, 'bin'));
  return unique([gobin, ...dirs]);
}

async function makeWritable(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await makeWritable(full);
    else await fs.chmod(full, 0o644);
  }
}

function unique(values: Array<string | undefined>): string[] {
  return [...new Set(values.filter((v): v is string => Boolean(v)))];
}

/** The first line of a failed command's message that is not the command line itself. */
function firstLine(text: string): string {
  return text.split('\n').find((line) => line.trim() && !line.startsWith('`')) ?? text;
}
