// One pino JSON line as a line for a person: time, level, process name, message, then the other fields as
// key=value (an error's stack on the lines below). Ours rather than pino-pretty's: that is a development tool (a
// devDependency, absent from the production image), and a terminal needs only this much.
const LEVELS: Readonly<Record<number, { name: string; colour: string }>> = {
  10: { name: 'TRACE', colour: '90' },
  20: { name: 'DEBUG', colour: '36' },
  30: { name: 'INFO ', colour: '32' },
  40: { name: 'WARN ', colour: '33' },
  50: { name: 'ERROR', colour: '31' },
  60: { name: 'FATAL', colour: '35' },
};

/** Fields every line has, shown in the line's head (or not at all: pid and hostname are the same on every line). */
const HEAD = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);

const SIMPLE = /^[^\s"=]{1,200}$/;

function valueText(v: unknown): string {
  if (typeof v === 'string') return SIMPLE.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

function timeText(time: unknown): string {
  const d = typeof time === 'number' ? new Date(time) : new Date();
  return d.toISOString().slice(11, 23);
}

/** An error pino serialized (type, message, stack): its stack, indented under the line. */
function stackOf(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const stack = Reflect.get(v, 'stack');
  return typeof stack === 'string' ? stack : undefined;
}

export function prettyLine(json: string, colour: boolean): string {
  let entry: unknown;
  try {
    entry = JSON.parse(json);
  } catch {
    return json;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return json;
  const fields = entry as Record<string, unknown>;
  const level = LEVELS[typeof fields.level === 'number' ? fields.level : 30] ?? {
    name: String(fields.level),
    colour: '0',
  };
  const paint = (code: string, text: string): string => (colour ? `\u001b[${code}m${text}\u001b[0m` : text);
  const parts = [timeText(fields.time), paint(level.colour, level.name)];
  if (typeof fields.name === 'string') parts.push(paint('90', `${fields.name}:`));
  parts.push(typeof fields.msg === 'string' ? fields.msg : '');
  const stacks: string[] = [];
  for (const [k, v] of Object.entries(fields)) {
    if (HEAD.has(k)) continue;
    const stack = stackOf(v);
    if (stack !== undefined) {
      stacks.push(stack.replace(/^/gm, '    '));
      parts.push(`${k}=${valueText(Reflect.get(v as object, 'message'))}`);
    } else {
      parts.push(`${paint('90', `${k}=`)}${valueText(v)}`);
    }
  }
  return `${[parts.join(' '), ...stacks].join('\n')}\n`;
}
