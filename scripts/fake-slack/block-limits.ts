// Block Kit limits as Slack enforces them: the fake Slack Web API rejects with these, and block-builder tests reuse them.
//
// Slack validates blocks against a strict schema: unknown block or element types, unknown properties,
// empty or over-long text and duplicate ids all fail the whole call. The problems carry a JSON pointer
// in the same `[ERROR] ... [json-pointer:/blocks/0/text/text]` form Slack puts in
// `response_metadata.messages`, so a failing test says which block broke which rule.

export type BlockSurface = 'message' | 'modal' | 'home';

export interface BlockProblem {
  /** The Slack error code the call fails with. */
  error: 'invalid_blocks' | 'msg_blocks_too_long' | 'invalid_arguments' | 'view_too_large';
  /** JSON pointer into the request argument, e.g. `/blocks/2/elements/0/text/text`. */
  pointer: string;
  message: string;
}

export const BLOCK_LIMITS = {
  blocks: { message: 50, modal: 100, home: 100 } as Record<BlockSurface, number>,
  /** Sum of every `text` string in a message's blocks; over it Slack answers msg_blocks_too_long. */
  messageBlocksTotalText: 12000,
  textObject: 3000,
  sectionText: 3000,
  sectionFieldText: 2000,
  sectionFields: 10,
  headerText: 150,
  buttonText: 75,
  buttonValue: 2000,
  accessibilityLabel: 75,
  url: 3000,
  id: 255,
  actionsElements: 25,
  contextElements: 10,
  inputLabel: 2000,
  inputHint: 2000,
  imageAltText: 2000,
  imageTitle: 2000,
  placeholder: 150,
  optionText: 75,
  optionValue: 150,
  optionDescription: 75,
  options: 100,
  optionGroups: 100,
  optionGroupLabel: 75,
  overflowOptions: 5,
  choiceOptions: 10,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  viewTitle: 24,
  viewButton: 24,
  privateMetadata: 3000,
  viewBytes: 250_000,
} as const;

const L = BLOCK_LIMITS;

/** Returns Slack's error code for these blocks, or null when Slack would accept them. */
export function checkBlocks(blocks: unknown, kind: BlockSurface): string | null {
  return findBlockProblem(blocks, kind)?.error ?? null;
}

/** Like checkBlocks, with the pointer and the reason. `base` prefixes the pointer (`/view/blocks` for views). */
export function findBlockProblem(blocks: unknown, kind: BlockSurface, base = '/blocks'): BlockProblem | null {
  try {
    checkBlockList(blocks, kind, base);
  } catch (err) {
    if (err instanceof Invalid) return { error: err.code, pointer: err.pointer, message: err.message };
    throw err;
  }
  if (kind === 'message') {
    const total = countText(blocks);
    if (total > L.messageBlocksTotalText) {
      return {
        error: 'msg_blocks_too_long',
        pointer: base,
        message: `blocks hold ${total} characters of text, more than ${L.messageBlocksTotalText}`,
      };
    }
  }
  return null;
}

/** Checks a `views.open` / `views.update` (modal) or `views.publish` (home) view; Slack answers invalid_arguments. */
export function findViewProblem(view: unknown, kind: 'modal' | 'home'): BlockProblem | null {
  try {
    checkView(view, kind);
  } catch (err) {
    if (err instanceof Invalid) return { error: err.code, pointer: err.pointer, message: err.message };
    throw err;
  }
  return null;
}

/**
 * For view-builder tests: null when Slack would accept this modal (or Home) view, else the problem as Slack
 * lists it. Covers 100 blocks a view, title/submit/close ≤24, input labels and hints ≤2000, private_metadata
 * ≤3000, every block and element rule of checkBlocks, and "submit" being required with input blocks.
 */
export function checkViewLimits(view: unknown, kind: 'modal' | 'home' = 'modal'): string | null {
  const problem = findViewProblem(view, kind);
  return problem ? formatProblem(problem) : null;
}

/** Formats a problem the way Slack lists it in `response_metadata.messages`. */
export function formatProblem(problem: BlockProblem): string {
  return `[ERROR] ${problem.message} [json-pointer:${problem.pointer}]`;
}

// ---------------------------------------------------------------------------------------------

class Invalid extends Error {
  constructor(
    readonly pointer: string,
    message: string,
    readonly code: BlockProblem['error'] = 'invalid_blocks',
  ) {
    super(message);
  }
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(v: unknown, p: string, code?: BlockProblem['error']): Obj {
  if (!isObj(v)) throw new Invalid(p, 'must be an object', code);
  return v;
}

function onlyKeys(o: Obj, allowed: readonly string[], p: string, code?: BlockProblem['error']): void {
  for (const key of Object.keys(o)) {
    if (!allowed.includes(key)) throw new Invalid(`${p}/${key}`, `unsupported property "${key}"`, code);
  }
}

function str(v: unknown, p: string, max: number, min = 1, code?: BlockProblem['error']): string {
  if (typeof v !== 'string') throw new Invalid(p, 'must be a string', code);
  if (v.length < min) throw new Invalid(p, `must be at least ${min} character${min === 1 ? '' : 's'}`, code);
  if (v.length > max) throw new Invalid(p, `must be less than ${max + 1} characters`, code);
  return v;
}

function optStr(o: Obj, key: string, p: string, max: number, min = 1, code?: BlockProblem['error']): void {
  if (o[key] !== undefined) str(o[key], `${p}/${key}`, max, min, code);
}

function optBool(o: Obj, key: string, p: string, code?: BlockProblem['error']): void {
  if (o[key] !== undefined && typeof o[key] !== 'boolean') throw new Invalid(`${p}/${key}`, 'must be a boolean', code);
}

function arr(v: unknown, p: string, max: number, min = 1, code?: BlockProblem['error']): unknown[] {
  if (!Array.isArray(v)) throw new Invalid(p, 'must be an array', code);
  if (v.length < min) throw new Invalid(p, `must provide at least ${min} item${min === 1 ? '' : 's'}`, code);
  if (v.length > max) throw new Invalid(p, `must provide no more than ${max} items`, code);
  return v;
}

function textObject(
  v: unknown,
  p: string,
  max: number,
  opts: { plainOnly?: boolean; code?: BlockProblem['error'] } = {},
): void {
  const t = obj(v, p, opts.code);
  if (t.type === 'plain_text') {
    onlyKeys(t, ['type', 'text', 'emoji'], p, opts.code);
    optBool(t, 'emoji', p, opts.code);
  } else if (t.type === 'mrkdwn' && !opts.plainOnly) {
    onlyKeys(t, ['type', 'text', 'verbatim'], p, opts.code);
    optBool(t, 'verbatim', p, opts.code);
  } else {
    const allowed = opts.plainOnly ? '"plain_text"' : '"plain_text" or "mrkdwn"';
    throw new Invalid(`${p}/type`, `must be ${allowed}`, opts.code);
  }
  str(t.text, `${p}/text`, max, 1, opts.code);
}

// --- blocks ----------------------------------------------------------------------------------

const BLOCK_KEYS: Record<string, readonly string[]> = {
  header: ['text'],
  section: ['text', 'fields', 'accessory', 'expand'],
  context: ['elements'],
  actions: ['elements'],
  divider: [],
  rich_text: ['elements'],
  input: ['label', 'element', 'dispatch_action', 'hint', 'optional'],
  image: ['image_url', 'slack_file', 'alt_text', 'title'],
};

function checkBlockList(blocks: unknown, kind: BlockSurface, base: string): void {
  const list = arr(blocks, base, L.blocks[kind], 0);
  const blockIds = new Set<string>();
  list.forEach((raw, i) => {
    const p = `${base}/${i}`;
    const block = obj(raw, p);
    const type = block.type;
    if (typeof type !== 'string' || !(type in BLOCK_KEYS)) {
      throw new Invalid(`${p}/type`, `unknown block type ${JSON.stringify(type)}`);
    }
    onlyKeys(block, ['type', 'block_id', ...BLOCK_KEYS[type]], p);
    if (block.block_id !== undefined) {
      const id = str(block.block_id, `${p}/block_id`, L.id);
      if (blockIds.has(id)) throw new Invalid(`${p}/block_id`, `duplicate block_id "${id}"`);
      blockIds.add(id);
    }
    BLOCK_CHECKS[type](block, p);
  });
}

const BLOCK_CHECKS: Record<string, (block: Obj, p: string) => void> = {
  header(b, p) {
    textObject(b.text, `${p}/text`, L.headerText, { plainOnly: true });
  },
  section(b, p) {
    if (b.text === undefined && b.fields === undefined) {
      throw new Invalid(p, 'section must have "text" or "fields"');
    }
    if (b.text !== undefined) textObject(b.text, `${p}/text`, L.sectionText);
    if (b.fields !== undefined) {
      arr(b.fields, `${p}/fields`, L.sectionFields).forEach((f, i) =>
        textObject(f, `${p}/fields/${i}`, L.sectionFieldText),
      );
    }
    optBool(b, 'expand', p);
    if (b.accessory !== undefined) element(b.accessory, `${p}/accessory`, SECTION_ACCESSORIES);
  },
  context(b, p) {
    arr(b.elements, `${p}/elements`, L.contextElements).forEach((e, i) => {
      const ep = `${p}/elements/${i}`;
      if (isObj(e) && e.type === 'image') imageElement(e, ep);
      else textObject(e, ep, L.textObject);
    });
  },
  actions(b, p) {
    const actionIds = new Set<string>();
    arr(b.elements, `${p}/elements`, L.actionsElements).forEach((e, i) =>
      element(e, `${p}/elements/${i}`, ACTIONS_ELEMENTS, actionIds),
    );
  },
  divider() {},
  rich_text(b, p) {
    arr(b.elements, `${p}/elements`, Number.MAX_SAFE_INTEGER, 0).forEach((e, i) => {
      const ep = `${p}/elements/${i}`;
      const el = obj(e, ep);
      if (!RICH_TEXT_CONTAINERS.includes(el.type as string)) {
        throw new Invalid(`${ep}/type`, `unknown rich_text element type ${JSON.stringify(el.type)}`);
      }
    });
  },
  input(b, p) {
    textObject(b.label, `${p}/label`, L.inputLabel, { plainOnly: true });
    if (b.hint !== undefined) textObject(b.hint, `${p}/hint`, L.inputHint, { plainOnly: true });
    optBool(b, 'optional', p);
    optBool(b, 'dispatch_action', p);
    if (b.element === undefined) throw new Invalid(`${p}/element`, 'input block must have an "element"');
    element(b.element, `${p}/element`, INPUT_ELEMENTS);
  },
  image(b, p) {
    imageElement(b, p, true);
  },
};

const RICH_TEXT_CONTAINERS = ['rich_text_section', 'rich_text_list', 'rich_text_preformatted', 'rich_text_quote'];

function imageElement(e: Obj, p: string, isBlock = false): void {
  if (!isBlock) onlyKeys(e, ['type', 'image_url', 'slack_file', 'alt_text'], p);
  if (e.image_url === undefined && e.slack_file === undefined) {
    throw new Invalid(p, 'image must have "image_url" or "slack_file"');
  }
  optStr(e, 'image_url', p, L.url);
  str(e.alt_text, `${p}/alt_text`, L.imageAltText);
  if (isBlock && e.title !== undefined) textObject(e.title, `${p}/title`, L.imageTitle, { plainOnly: true });
}

// --- elements --------------------------------------------------------------------------------

const SELECTS = [
  'static_select',
  'external_select',
  'users_select',
  'conversations_select',
  'channels_select',
  'multi_static_select',
  'multi_external_select',
  'multi_users_select',
  'multi_conversations_select',
  'multi_channels_select',
];
const CHOICES = ['checkboxes', 'radio_buttons'];
const PICKERS = ['datepicker', 'timepicker', 'datetimepicker'];
const ACTIONS_ELEMENTS = ['button', 'overflow', 'workflow_button', ...SELECTS, ...CHOICES, ...PICKERS];
const SECTION_ACCESSORIES = ['image', ...ACTIONS_ELEMENTS];
const INPUT_ELEMENTS = [
  'plain_text_input',
  'email_text_input',
  'url_text_input',
  'number_input',
  'rich_text_input',
  'file_input',
  ...SELECTS,
  ...CHOICES,
  ...PICKERS,
];

function element(raw: unknown, p: string, allowed: readonly string[], actionIds?: Set<string>): void {
  const e = obj(raw, p);
  const type = e.type;
  if (typeof type !== 'string' || !allowed.includes(type)) {
    throw new Invalid(`${p}/type`, `element type ${JSON.stringify(type)} is not allowed here`);
  }
  if (type === 'image') return imageElement(e, p);
  if (e.action_id !== undefined) {
    const id = str(e.action_id, `${p}/action_id`, L.id);
    if (actionIds?.has(id)) throw new Invalid(`${p}/action_id`, `duplicate action_id "${id}" in the block`);
    actionIds?.add(id);
  }
  if (e.confirm !== undefined) confirmDialog(e.confirm, `${p}/confirm`);
  if (e.placeholder !== undefined) textObject(e.placeholder, `${p}/placeholder`, L.placeholder, { plainOnly: true });
  optBool(e, 'focus_on_load', p);
  if (type === 'button') return button(e, p);
  if (type === 'overflow') {
    onlyKeys(e, ['type', 'action_id', 'options', 'confirm'], p);
    arr(e.options, `${p}/options`, L.overflowOptions).forEach((o, i) => option(o, `${p}/options/${i}`, true));
    return;
  }
  if (CHOICES.includes(type)) {
    arr(e.options, `${p}/options`, L.choiceOptions).forEach((o, i) => option(o, `${p}/options/${i}`));
    return;
  }
  if (type === 'static_select' || type === 'multi_static_select') {
    if ((e.options === undefined) === (e.option_groups === undefined)) {
      throw new Invalid(p, 'must provide exactly one of "options" or "option_groups"');
    }
    if (e.options !== undefined) {
      arr(e.options, `${p}/options`, L.options).forEach((o, i) => option(o, `${p}/options/${i}`));
    } else {
      arr(e.option_groups, `${p}/option_groups`, L.optionGroups).forEach((g, gi) => {
        const gp = `${p}/option_groups/${gi}`;
        const group = obj(g, gp);
        onlyKeys(group, ['label', 'options'], gp);
        textObject(group.label, `${gp}/label`, L.optionGroupLabel, { plainOnly: true });
        arr(group.options, `${gp}/options`, L.options).forEach((o, i) => option(o, `${gp}/options/${i}`));
      });
    }
  }
  if (type === 'plain_text_input') {
    optStr(e, 'initial_value', p, L.textObject, 0);
    for (const key of ['min_length', 'max_length']) {
      if (
        e[key] !== undefined &&
        (typeof e[key] !== 'number' || !Number.isInteger(e[key]) || (e[key] as number) < 0 || (e[key] as number) > 3000)
      ) {
        throw new Invalid(`${p}/${key}`, 'must be an integer from 0 to 3000');
      }
    }
  }
}

function button(e: Obj, p: string): void {
  onlyKeys(e, ['type', 'text', 'action_id', 'url', 'value', 'style', 'confirm', 'accessibility_label'], p);
  textObject(e.text, `${p}/text`, L.buttonText, { plainOnly: true });
  optStr(e, 'value', p, L.buttonValue);
  optStr(e, 'url', p, L.url);
  optStr(e, 'accessibility_label', p, L.accessibilityLabel);
  if (e.style !== undefined && e.style !== 'primary' && e.style !== 'danger') {
    throw new Invalid(`${p}/style`, 'must be "primary" or "danger"');
  }
}

function option(raw: unknown, p: string, overflow = false): void {
  const o = obj(raw, p);
  onlyKeys(o, overflow ? ['text', 'value', 'description', 'url'] : ['text', 'value', 'description'], p);
  textObject(o.text, `${p}/text`, L.optionText);
  str(o.value, `${p}/value`, L.optionValue);
  if (o.description !== undefined)
    textObject(o.description, `${p}/description`, L.optionDescription, { plainOnly: true });
  optStr(o, 'url', p, L.url);
}

function confirmDialog(raw: unknown, p: string): void {
  const c = obj(raw, p);
  onlyKeys(c, ['title', 'text', 'confirm', 'deny', 'style'], p);
  textObject(c.title, `${p}/title`, L.confirmTitle, { plainOnly: true });
  textObject(c.text, `${p}/text`, L.confirmText);
  textObject(c.confirm, `${p}/confirm`, L.confirmButton, { plainOnly: true });
  textObject(c.deny, `${p}/deny`, L.confirmButton, { plainOnly: true });
  if (c.style !== undefined && c.style !== 'primary' && c.style !== 'danger') {
    throw new Invalid(`${p}/style`, 'must be "primary" or "danger"');
  }
}

// --- views -----------------------------------------------------------------------------------

const VIEW_KEYS = {
  modal: [
    'type',
    'title',
    'blocks',
    'close',
    'submit',
    'private_metadata',
    'callback_id',
    'clear_on_close',
    'notify_on_close',
    'external_id',
    'submit_disabled',
  ],
  home: ['type', 'title', 'blocks', 'private_metadata', 'callback_id', 'external_id'],
} as const;

function checkView(raw: unknown, kind: 'modal' | 'home'): void {
  const bad = 'invalid_arguments' as const;
  const view = obj(raw, '/view', bad);
  if (JSON.stringify(view).length > L.viewBytes)
    throw new Invalid('/view', 'view is larger than 250kb', 'view_too_large');
  if (view.type !== kind) throw new Invalid('/view/type', `must be "${kind}"`, bad);
  onlyKeys(view, VIEW_KEYS[kind], '/view', bad);
  if (kind === 'modal' && view.title === undefined)
    throw new Invalid('/view/title', 'a modal must have a "title"', bad);
  for (const key of ['title', 'close', 'submit'] as const) {
    if (view[key] !== undefined) {
      const max = key === 'title' ? L.viewTitle : L.viewButton;
      textObject(view[key], `/view/${key}`, max, { plainOnly: true, code: bad });
    }
  }
  optStr(view, 'private_metadata', '/view', L.privateMetadata, 0, bad);
  optStr(view, 'callback_id', '/view', L.id, 0, bad);
  optStr(view, 'external_id', '/view', L.id, 0, bad);
  for (const key of ['clear_on_close', 'notify_on_close', 'submit_disabled']) optBool(view, key, '/view', bad);
  if (view.blocks === undefined) throw new Invalid('/view/blocks', 'a view must have "blocks"', bad);
  const problem = findBlockProblem(view.blocks, kind, '/view/blocks');
  if (problem) throw new Invalid(problem.pointer, problem.message, bad);
  const hasInput = (view.blocks as Obj[]).some((b) => b.type === 'input');
  if (kind === 'modal' && hasInput && view.submit === undefined) {
    throw new Invalid('/view/submit', '"submit" is required when the view has input blocks', bad);
  }
}

// --- text accounting -------------------------------------------------------------------------

/** Every `text` string anywhere in the blocks: text objects, rich text runs, button labels, fields. */
function countText(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + countText(x), 0);
  if (!isObj(v)) return 0;
  let n = 0;
  for (const [key, value] of Object.entries(v)) {
    if (key === 'text' && typeof value === 'string') n += value.length;
    else n += countText(value);
  }
  return n;
}
