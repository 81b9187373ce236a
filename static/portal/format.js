// What scripts write for people: data sizes and durations as NiFi writes them, and content as
// text (UTF-8), a hex dump (offset | hex bytes | ASCII) or pretty-printed JSON or XML, with which
// of them suits a content (from its mime type or its bytes).

const BYTES_PER_LINE = 16;
const UNITS = ["bytes", "KB", "MB", "GB", "TB"];

/** A size in NiFi's words: "512 bytes", "1.5 KB", "3.2 MB" (units of 1,024). */
export function dataSize(bytes) {
  let value = Number(bytes) || 0;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} bytes` : `${value.toFixed(value < 10 ? 2 : 1).replace(/\.?0+$/, "")} ${UNITS[unit]}`;
}

/** A duration in milliseconds as NiFi shows queue ages: "HH:mm:ss.SSS". */
export function duration(ms) {
  const total = Math.max(0, Math.round(Number(ms) || 0));
  const part = (value, width = 2) => String(value).padStart(width, "0");
  return `${part(Math.floor(total / 3_600_000))}:${part(Math.floor(total / 60_000) % 60)}:` +
         `${part(Math.floor(total / 1000) % 60)}.${part(total % 1000, 3)}`;
}

/** The bytes as UTF-8 text, or null when they are not (a character cut at the end is allowed:
 *  the first chunk of a larger content may end inside one). */
export function asText(bytes) {
  try {
    const text = new TextDecoder("utf-8", {fatal: true}).decode(bytes, {stream: true});
    const controls = (text.match(/[\u0000-\u0008\u000e-\u001f\u007f]/g) || []).length;
    return controls > Math.max(2, text.length / 100) ? null : text;
  } catch (error) {
    return null;
  }
}

/** "00000010  48 65 6c 6c 6f 20 77 6f  72 6c 64 0a 00 01 02 03  |Hello world.....|" lines;
 *  ``offset`` is the first byte's place in the whole content. */
export function hexDump(bytes, offset = 0) {
  const lines = [];
  for (let start = 0; start < bytes.length; start += BYTES_PER_LINE) {
    const row = bytes.subarray(start, start + BYTES_PER_LINE);
    const hex = [...row].map((b) => b.toString(16).padStart(2, "0"));
    const left = hex.slice(0, 8).join(" ");
    const right = hex.slice(8).join(" ");
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${(offset + start).toString(16).padStart(8, "0")}  ${left.padEnd(23)}  ${right.padEnd(23)}  |${ascii}|`);
  }
  return lines.join("\n");
}

/** JSON indented by two spaces (throws when it is not JSON). */
export function prettyJson(text) {
  return JSON.stringify(JSON.parse(text), null, 2);
}

const escapeXml = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function xmlLines(parent, depth, out) {
  const pad = "  ".repeat(depth);
  for (const node of parent.childNodes) {
    if (node.nodeType === Node.ELEMENT_NODE) {
      const attributes = [...node.attributes].map((a) => ` ${a.name}="${escapeXml(a.value).replace(/"/g, "&quot;")}"`).join("");
      const children = [...node.childNodes].filter((c) => c.nodeType !== Node.TEXT_NODE || c.nodeValue.trim());
      if (children.length === 0) {
        out.push(`${pad}<${node.nodeName}${attributes}/>`);
      } else if (children.length === 1 && children[0].nodeType === Node.TEXT_NODE) {
        out.push(`${pad}<${node.nodeName}${attributes}>${escapeXml(children[0].nodeValue.trim())}</${node.nodeName}>`);
      } else {
        out.push(`${pad}<${node.nodeName}${attributes}>`);
        xmlLines(node, depth + 1, out);
        out.push(`${pad}</${node.nodeName}>`);
      }
    } else if (node.nodeType === Node.TEXT_NODE) {
      out.push(pad + escapeXml(node.nodeValue.trim()));
    } else if (node.nodeType === Node.CDATA_SECTION_NODE) {
      out.push(`${pad}<![CDATA[${node.nodeValue}]]>`);
    } else if (node.nodeType === Node.COMMENT_NODE) {
      out.push(`${pad}<!--${node.nodeValue}-->`);
    } else if (node.nodeType === Node.PROCESSING_INSTRUCTION_NODE) {
      out.push(`${pad}<?${node.target} ${node.data}?>`);
    }
  }
}

/** XML indented by two spaces (throws when it is not well-formed XML). */
export function prettyXml(text) {
  const document = new DOMParser().parseFromString(text, "application/xml");
  if (document.getElementsByTagName("parsererror").length) throw new Error("not well-formed XML");
  const out = [];
  xmlLines(document, 0, out);
  return out.join("\n");
}

/** The view that suits a content: "json", "xml", "text" or "hex". ``mime``: its mime.type. */
export function suitedView(mime, text) {
  const type = (mime || "").toLowerCase();
  if (text === null) return "hex";
  if (/[/+]json\b/.test(type)) return "json";
  if (/[/+]xml\b/.test(type)) return "xml";
  const start = text.trimStart()[0];
  if (start === "{" || start === "[") {
    try { JSON.parse(text); return "json"; } catch (error) { /* not JSON */ }
  }
  if (start === "<") {
    try { prettyXml(text); return "xml"; } catch (error) { /* not XML */ }
  }
  return "text";
}
