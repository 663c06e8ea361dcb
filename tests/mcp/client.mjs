// A real MCP client (the official SDK's Client over stdio) for the mcp-proxy tests.
//
//   node client.mjs DIR FILE -- COMMAND [ARGS...]
//
// Starts COMMAND (the proxy, or a server directly) with the SDK's StdioClientTransport, then
// lists the tools, reads FILE with read_text_file, lists DIR, reads FILE's directory tree, asks
// wm_get_result for the read's original (when the read carries a "_tee" pointer), with
// selectors when PARROT_TEST_GREP is set (see below), and for an unknown key, and prints one
// JSON object with everything it received.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
if (dash !== 2 || argv.length < 4) {
  console.error("usage: node client.mjs DIR FILE -- COMMAND [ARGS...]");
  process.exit(2);
}
const [dir, file] = argv;
const [command, ...args] = argv.slice(3);

const transport = new StdioClientTransport({
  command,
  args,
  // The SDK passes only a few variables by default; the tests steer the proxy through the
  // environment (the kill switch), so pass all of it.
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "parrot-compress-tests", version: "0.1.0" });
await client.connect(transport);

const textOf = (result) =>
  (result.content ?? []).filter((b) => b.type === "text").map((b) => b.text);

const out = {};
const listed = await client.listTools();
out.tools = listed.tools.map((t) => t.name);

const read = await client.callTool({ name: "read_text_file", arguments: { path: file } });
out.read = { text: textOf(read), structured: read.structuredContent ?? null, isError: read.isError ?? false };

const listing = await client.callTool({ name: "list_directory", arguments: { path: dir } });
out.list_directory = { text: textOf(listing), isError: listing.isError ?? false };

const tree = await client.callTool({ name: "directory_tree", arguments: { path: dir } });
out.directory_tree = { text: textOf(tree), isError: tree.isError ?? false };

// The pointer: a JSON result's "_tee" member, or the last line of a text result
// ([wm_get_result {"key":"..."} returns the original of this <reason> result; ...]).
let pointer = null;
try {
  pointer = JSON.parse(out.read.text[0])._tee ?? null;
} catch {
  const last = (out.read.text[0] ?? "").split("\n").pop();
  const found = /^\[wm_get_result \{"key":("(?:[^"\\]|\\.)*")\} returns the original of this (\w+) result/.exec(last);
  pointer = found ? { key: JSON.parse(found[1]), reason: found[2] } : null;
}
out.pointer = pointer;
if (pointer && out.tools.includes("wm_get_result")) {
  const recovered = await client.callTool({ name: "wm_get_result", arguments: { key: pointer.key } });
  out.recovered = { text: textOf(recovered), isError: recovered.isError ?? false };
}
// With PARROT_TEST_GREP set: recovery calls with selectors, for a text read the log codec
// shortened: grep for that expression with two lines of context, the line range of the first
// marker the shortened text names ("lines A-B", held to 4,000 characters), and a malformed
// range.
const grep = process.env.PARROT_TEST_GREP;
if (pointer && grep && out.tools.includes("wm_get_result")) {
  // The text the pointer follows: a JSON wrapper's result, or a text's lines.
  let shortened = "";
  try {
    shortened = JSON.parse(out.read.text[0]).result ?? "";
  } catch {
    shortened = out.read.text[0] ?? "";
  }
  const marker = /lines (\d+)-(\d+)/.exec(typeof shortened === "string" ? shortened : "");
  out.selected = [];
  const ask = async (args) => {
    const answer = await client.callTool({
      name: "wm_get_result",
      arguments: { key: pointer.key, ...args },
    });
    out.selected.push({ arguments: args, text: textOf(answer), isError: answer.isError ?? false });
  };
  await ask({ grep, context: 2 });
  if (marker) {
    await ask({ lines: `${marker[1]}-${marker[2]}`, max_chars: 4000 });
  }
  await ask({ lines: "12-x" });
}
if (out.tools.includes("wm_get_result")) {
  const unknown = await client.callTool({ name: "wm_get_result", arguments: { key: "no-such-key" } });
  out.unknown = { text: textOf(unknown), isError: unknown.isError ?? false };
}

await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
