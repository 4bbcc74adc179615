// Test helper: a strict-enough XML well-formedness check for the SVGs the scripts write (one root,
// balanced and properly nested tags, quoted attributes without duplicates, only the five predefined
// entities or numeric references, no stray '<' or '&' in text). Returns the elements found.

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
}

const NAME = "[A-Za-z_][\\w.:-]*";
const ATTR = new RegExp(`\\s+(${NAME})\\s*=\\s*"([^"<]*)"`, "y");
const ENTITY = /&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/;

/** Parses `xml`, throwing an Error describing the first problem. */
export function checkXml(xml: string): XmlElement[] {
  const elements: XmlElement[] = [];
  const stack: string[] = [];
  let roots = 0;
  let i = 0;
  const text = (t: string) => {
    if (ENTITY.test(t)) throw new Error(`bad entity in text near ${JSON.stringify(t.slice(0, 40))}`);
    if (stack.length === 0 && t.trim() !== "") throw new Error(`text outside the root: ${JSON.stringify(t.slice(0, 40))}`);
  };
  while (i < xml.length) {
    const lt = xml.indexOf("<", i);
    if (lt < 0) {
      text(xml.slice(i));
      break;
    }
    text(xml.slice(i, lt));
    if (xml.startsWith("</", lt)) {
      const m = new RegExp(`</(${NAME})\\s*>`, "y");
      m.lastIndex = lt;
      const r = m.exec(xml);
      if (!r) throw new Error(`malformed end tag at ${lt}`);
      const open = stack.pop();
      if (open !== r[1]) throw new Error(`</${r[1]}> closes <${open}> at ${lt}`);
      i = m.lastIndex;
      continue;
    }
    const start = new RegExp(`<(${NAME})`, "y");
    start.lastIndex = lt;
    const s = start.exec(xml);
    if (!s) throw new Error(`stray '<' at ${lt}`);
    const attrs: Record<string, string> = {};
    let j = start.lastIndex;
    for (;;) {
      ATTR.lastIndex = j;
      const a = ATTR.exec(xml);
      if (!a) break;
      if (a[1] in attrs) throw new Error(`duplicate attribute ${a[1]} on <${s[1]}>`);
      if (ENTITY.test(a[2])) throw new Error(`bad entity in attribute ${a[1]}`);
      attrs[a[1]] = a[2];
      j = ATTR.lastIndex;
    }
    const close = /\s*(\/?)>/y;
    close.lastIndex = j;
    const c = close.exec(xml);
    if (!c) throw new Error(`malformed start tag <${s[1]}> at ${lt}`);
    if (stack.length === 0 && ++roots > 1) throw new Error("more than one root element");
    elements.push({ name: s[1], attrs });
    if (c[1] !== "/") stack.push(s[1]);
    i = close.lastIndex;
  }
  if (stack.length) throw new Error(`unclosed <${stack.at(-1)}>`);
  if (roots !== 1) throw new Error("no root element");
  return elements;
}
