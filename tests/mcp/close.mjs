// The official SDK's Client over stdio, ended with close(), for the mcp-proxy signal tests.
//
//   node close.mjs DIR -- COMMAND [ARGS...]
//
// Starts COMMAND (the proxy in front of the filesystem server) with the SDK's
// StdioClientTransport, calls list_directory on DIR, then close(): the transport closes the
// command's stdin, sends SIGTERM 2 s later if the command still runs, and SIGKILL 2 s after
// that. Prints one JSON object: the listing, how long close() took, and how the command ended
// (its exit code, or the signal that killed it).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
if (dash !== 1 || argv.length < 3) {
  console.error("usage: node close.mjs DIR -- COMMAND [ARGS...]");
  process.exit(2);
}
const [dir] = argv;
const [command, ...args] = argv.slice(2);

const transport = new StdioClientTransport({
  command,
  args,
  // All of it: the tests mark the session's processes through the environment.
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "parrot-compress-tests", version: "0.1.0" });
await client.connect(transport);

const out = { pid: transport.pid };
// The transport forgets its process in close(); its exit is watched from here.
const ended = new Promise((resolve) => {
  transport._process.once("exit", (code, signal) => resolve({ code, signal }));
});
const listing = await client.callTool({ name: "list_directory", arguments: { path: dir } });
out.list_directory = (listing.content ?? []).filter((b) => b.type === "text").map((b) => b.text);

const start = performance.now();
await client.close();
out.close_ms = Math.round(performance.now() - start);
out.exit = await ended;
process.stdout.write(JSON.stringify(out) + "\n");
