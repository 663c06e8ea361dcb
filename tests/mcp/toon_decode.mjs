// The reference TOON decoder (@toon-format/toon, pinned in package-lock.json): reads a TOON
// document on stdin and writes the JSON value it decodes to on stdout.
import { decode } from "@toon-format/toon";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
process.stdout.write(JSON.stringify(decode(Buffer.concat(chunks).toString("utf8"))));
