/**
 * CQL2's text encoding (OGC 21-065) read into its JSON encoding, which cql2.ts checks and
 * compiles: the tokens, then a recursive-descent parser over them. Pure.
 */
import { bad, MAX_DEPTH, MAX_FILTER_LENGTH } from './cql2-rules.js';

// ------------------------------------------------------------------------------------------
// The text encoding, into the JSON one.

type Token =
  | { kind: 'word'; text: string; at: number }
  | { kind: 'quoted'; text: string; at: number }
  | { kind: 'string'; text: string; at: number }
  | { kind: 'number'; value: number; at: number }
  | { kind: 'symbol'; text: string; at: number }
  | { kind: 'end'; at: number };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const at = i;
    if (c === "'") {
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length) throw bad(`a string starting at character ${at + 1} is not closed`);
        if (text[i] === "'") {
          if (text[i + 1] === "'") {
            value += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += text[i];
        i++;
      }
      tokens.push({ kind: 'string', text: value, at });
    } else if (c === '"') {
      const close = text.indexOf('"', i + 1);
      if (close < 0) throw bad(`a quoted name starting at character ${at + 1} is not closed`);
      tokens.push({ kind: 'quoted', text: text.slice(i + 1, close), at });
      i = close + 1;
    } else if (/[0-9.]/.test(c) || ((c === '-' || c === '+') && /[0-9.]/.test(text[i + 1] ?? ''))) {
      const match = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i));
      if (!match) throw bad(`a number at character ${at + 1} is malformed`);
      tokens.push({ kind: 'number', value: Number(match[0]), at });
      i += match[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const match = /^[A-Za-z_][A-Za-z0-9_:.]*/.exec(text.slice(i)) as RegExpExecArray;
      tokens.push({ kind: 'word', text: match[0], at });
      i += match[0].length;
    } else {
      const two = text.slice(i, i + 2);
      if (two === '<>' || two === '<=' || two === '>=' || two === '!=') {
        tokens.push({ kind: 'symbol', text: two === '!=' ? '<>' : two, at });
        i += 2;
      } else if ('=<>(),'.includes(c)) {
        tokens.push({ kind: 'symbol', text: c, at });
        i++;
      } else {
        throw bad(`unexpected ${JSON.stringify(c)} at character ${at + 1}`);
      }
    }
  }
  tokens.push({ kind: 'end', at: text.length });
  return tokens;
}

const COMPARISONS = new Set(['=', '<>', '<', '<=', '>', '>=']);
const SPATIAL = new Set(['S_INTERSECTS']);
const TEMPORAL = new Set(['T_INTERSECTS']);
const ARRAYS: Record<string, string> = {
  A_CONTAINS: 'a_contains',
  A_CONTAINEDBY: 'a_containedBy',
  A_EQUALS: 'a_equals',
  A_OVERLAPS: 'a_overlaps',
};
const WKT = new Set([
  'POINT',
  'LINESTRING',
  'POLYGON',
  'MULTIPOINT',
  'MULTILINESTRING',
  'MULTIPOLYGON',
  'GEOMETRYCOLLECTION',
]);
const RESERVED = new Set(['AND', 'OR', 'NOT', 'LIKE', 'BETWEEN', 'IN', 'IS', 'NULL', 'TRUE', 'FALSE']);

class TextParser {
  private index = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index] as Token;
  }
  private next(): Token {
    return this.tokens[this.index++] as Token;
  }
  private isWord(word: string, token = this.peek()): boolean {
    return token.kind === 'word' && token.text.toUpperCase() === word;
  }
  private isSymbol(symbol: string, token = this.peek()): boolean {
    return token.kind === 'symbol' && token.text === symbol;
  }
  private where(token = this.peek()): string {
    return token.kind === 'end' ? 'at the end' : `at character ${token.at + 1}`;
  }
  private expectSymbol(symbol: string): void {
    if (!this.isSymbol(symbol)) throw bad(`expected ${JSON.stringify(symbol)} ${this.where()}`);
    this.index++;
  }
  private expectWord(word: string): void {
    if (!this.isWord(word)) throw bad(`expected ${word} ${this.where()}`);
    this.index++;
  }
  private deeper<T>(read: () => T): T {
    if (++this.depth > MAX_DEPTH) throw bad(`expressions nest more than ${MAX_DEPTH} deep`);
    try {
      return read();
    } finally {
      this.depth--;
    }
  }

  parse(): unknown {
    const expression = this.orExpression();
    if (this.peek().kind !== 'end') throw bad(`unexpected text ${this.where()}`);
    return expression;
  }

  private orExpression(): unknown {
    return this.deeper(() => {
      const args = [this.andExpression()];
      while (this.isWord('OR')) {
        this.index++;
        args.push(this.andExpression());
      }
      return args.length === 1 ? args[0] : { op: 'or', args };
    });
  }

  private andExpression(): unknown {
    const args = [this.notExpression()];
    while (this.isWord('AND')) {
      this.index++;
      args.push(this.notExpression());
    }
    return args.length === 1 ? args[0] : { op: 'and', args };
  }

  private notExpression(): unknown {
    if (this.isWord('NOT')) {
      this.index++;
      return this.deeper(() => ({ op: 'not', args: [this.notExpression()] }));
    }
    return this.primary();
  }

  private primary(): unknown {
    const token = this.peek();
    if (this.isSymbol('(')) {
      this.index++;
      const inner = this.orExpression();
      this.expectSymbol(')');
      return inner;
    }
    if (token.kind === 'word') {
      const word = token.text.toUpperCase();
      const call = this.isSymbol('(', this.tokens[this.index + 1] as Token);
      if (call && (SPATIAL.has(word) || TEMPORAL.has(word) || word in ARRAYS)) {
        this.index++;
        this.expectSymbol('(');
        const read = () =>
          SPATIAL.has(word) ? this.spatial() : TEMPORAL.has(word) ? this.temporal() : this.arrayOperand();
        const a = read();
        this.expectSymbol(',');
        const b = read();
        this.expectSymbol(')');
        return { op: ARRAYS[word] ?? word.toLowerCase(), args: [a, b] };
      }
      if ((word === 'TRUE' || word === 'FALSE') && !this.startsPredicate(1)) {
        this.index++;
        return word === 'TRUE';
      }
    }
    return this.predicate();
  }

  /** Whether the token `ahead` places on begins a comparison (so a TRUE before it is an operand). */
  private startsPredicate(ahead: number): boolean {
    const token = this.tokens[this.index + ahead] as Token;
    return (
      (token.kind === 'symbol' && COMPARISONS.has(token.text)) ||
      ['LIKE', 'BETWEEN', 'IN', 'IS', 'NOT'].some((word) => this.isWord(word, token))
    );
  }

  private predicate(): unknown {
    const left = this.scalar();
    const token = this.peek();
    if (token.kind === 'symbol' && COMPARISONS.has(token.text)) {
      this.index++;
      return { op: token.text, args: [left, this.scalar()] };
    }
    let negated = false;
    if (this.isWord('IS')) {
      this.index++;
      if (this.isWord('NOT')) {
        this.index++;
        negated = true;
      }
      this.expectWord('NULL');
      const test = { op: 'isNull', args: [left] };
      return negated ? { op: 'not', args: [test] } : test;
    }
    if (this.isWord('NOT')) {
      this.index++;
      negated = true;
    }
    let test: unknown;
    if (this.isWord('LIKE')) {
      this.index++;
      test = { op: 'like', args: [left, this.scalar()] };
    } else if (this.isWord('BETWEEN')) {
      this.index++;
      const low = this.scalar();
      this.expectWord('AND');
      test = { op: 'between', args: [left, low, this.scalar()] };
    } else if (this.isWord('IN')) {
      this.index++;
      this.expectSymbol('(');
      const list = [this.scalar()];
      while (this.isSymbol(',')) {
        this.index++;
        list.push(this.scalar());
      }
      this.expectSymbol(')');
      test = { op: 'in', args: [left, list] };
    } else {
      throw bad(`expected a comparison (=, <>, <, <=, >, >=, LIKE, BETWEEN, IN, IS NULL) ${this.where()}`);
    }
    return negated ? { op: 'not', args: [test] } : test;
  }

  /** A property, a string, a number, a boolean, TIMESTAMP(...) or DATE(...). */
  private scalar(): unknown {
    const token = this.next();
    if (token.kind === 'string') return token.text;
    if (token.kind === 'number') return token.value;
    if (token.kind === 'quoted') return { property: token.text };
    if (token.kind === 'word') {
      const word = token.text.toUpperCase();
      if (word === 'TRUE' || word === 'FALSE') return word === 'TRUE';
      if ((word === 'TIMESTAMP' || word === 'DATE') && this.isSymbol('(')) return this.instantLiteral(word);
      if (RESERVED.has(word)) throw bad(`expected a value, got ${token.text} at character ${token.at + 1}`);
      if (this.isSymbol('(')) throw bad(`no function ${token.text} (at character ${token.at + 1})`);
      return { property: token.text };
    }
    throw bad(`expected a value ${this.where(token)}`);
  }

  private instantLiteral(word: string): unknown {
    this.expectSymbol('(');
    const token = this.next();
    if (token.kind !== 'string') throw bad(`${word} takes a quoted text ${this.where(token)}`);
    this.expectSymbol(')');
    return word === 'TIMESTAMP' ? { timestamp: token.text } : { date: token.text };
  }

  private temporal(): unknown {
    if (this.isWord('INTERVAL') && this.isSymbol('(', this.tokens[this.index + 1] as Token)) {
      this.index += 2;
      const bound = () => {
        const token = this.peek();
        if (token.kind === 'string') {
          this.index++;
          return token.text;
        }
        const value = this.scalar();
        return typeof value === 'object' && value !== null && 'timestamp' in value
          ? (value as { timestamp: string }).timestamp
          : typeof value === 'object' && value !== null && 'date' in value
            ? (value as { date: string }).date
            : value;
      };
      const start = bound();
      this.expectSymbol(',');
      const end = bound();
      this.expectSymbol(')');
      return { interval: [start, end] };
    }
    return this.scalar();
  }

  private arrayOperand(): unknown {
    if (this.isSymbol('(')) {
      this.index++;
      const items: unknown[] = [];
      if (!this.isSymbol(')')) {
        items.push(this.scalar());
        while (this.isSymbol(',')) {
          this.index++;
          items.push(this.scalar());
        }
      }
      this.expectSymbol(')');
      return items;
    }
    return this.scalar();
  }

  private spatial(): unknown {
    const token = this.peek();
    if (token.kind === 'word') {
      const word = token.text.toUpperCase();
      if (word === 'BBOX' && this.isSymbol('(', this.tokens[this.index + 1] as Token)) {
        this.index += 2;
        const numbers = [this.number()];
        while (this.isSymbol(',')) {
          this.index++;
          numbers.push(this.number());
        }
        this.expectSymbol(')');
        return { bbox: numbers };
      }
      if (WKT.has(word)) return this.deeper(() => this.wkt());
    }
    return this.scalar();
  }

  private number(): number {
    const token = this.next();
    if (token.kind !== 'number') throw bad(`expected a number ${this.where(token)}`);
    return token.value;
  }

  /** A WKT geometry as GeoJSON (a Z coordinate, when written, is dropped). */
  private wkt(): unknown {
    const word = (this.next() as { text: string }).text.toUpperCase();
    if (this.isWord('Z')) this.index++;
    const position = () => {
      const x = this.number();
      const y = this.number();
      if (this.peek().kind === 'number') this.index++;
      return [x, y];
    };
    const list = <T>(item: () => T): T[] => {
      this.expectSymbol('(');
      const items = [item()];
      while (this.isSymbol(',')) {
        this.index++;
        items.push(item());
      }
      this.expectSymbol(')');
      return items;
    };
    const line = () => list(position);
    const polygon = () => list(line);
    switch (word) {
      case 'POINT':
        return { type: 'Point', coordinates: (list(position) as number[][])[0] };
      case 'LINESTRING':
        return { type: 'LineString', coordinates: line() };
      case 'POLYGON':
        return { type: 'Polygon', coordinates: polygon() };
      case 'MULTIPOINT':
        // Both forms: MULTIPOINT(1 2, 3 4) and MULTIPOINT((1 2), (3 4)).
        return {
          type: 'MultiPoint',
          coordinates: list(() => (this.isSymbol('(') ? (list(position)[0] as number[]) : position())),
        };
      case 'MULTILINESTRING':
        return { type: 'MultiLineString', coordinates: list(line) };
      case 'MULTIPOLYGON':
        return { type: 'MultiPolygon', coordinates: list(polygon) };
      default:
        return {
          type: 'GeometryCollection',
          geometries: list(() => {
            const token = this.peek();
            if (token.kind !== 'word' || !WKT.has(token.text.toUpperCase())) {
              throw bad(`expected a WKT geometry ${this.where()}`);
            }
            return this.deeper(() => this.wkt());
          }),
        };
    }
  }
}

/** CQL2 text as its CQL2 JSON. */
export function cql2TextToJson(text: string): unknown {
  if (text.length > MAX_FILTER_LENGTH) throw bad(`at most ${MAX_FILTER_LENGTH} characters`);
  if (text.trim() === '') throw bad('is empty');
  return new TextParser(tokenize(text)).parse();
}
