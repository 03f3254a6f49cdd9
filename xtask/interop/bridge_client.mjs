// A client written by others in front of `mcp bridge`: the official
// TypeScript SDK's `Client` over its `StdioClientTransport`, which starts
// the command line it is given (the bridge, serving a server) and drives it
// as it would any stdio server.
//
//     node bridge_client.mjs --sdk SDK_DIR --server everything|python \
//         [--wire-log FILE] -- COMMAND [ARGS...]
//
// SDK_DIR is the `@modelcontextprotocol/sdk` package to use (the one in
// server-everything's node_modules: no dependency of its own). `--server`
// names the server behind the bridge, which picks the tools and the answers
// expected of them. `--wire-log FILE` is the wire log of a `wiretap.py`
// between the bridge and the server: the cancel check looks there for the
// cancel the bridge relayed. The bridge's stderr (`mcp -v` shows the
// server's stderr there) is read too: the Python server says on it that a
// cancelled `slow` stopped.
//
// With `--http PORT`, the command is a bridge serving Streamable HTTP on
// `127.0.0.1:PORT` (`mcp bridge --serve http --listen 127.0.0.1:PORT …`):
// the script starts it and drives two clients at once over the SDK's
// `StreamableHTTPClientTransport`, each answering its own elicitation
// (one is Ada, the other Bob), then sends the bridge SIGTERM, which must
// end it within 5 s.
//
// Prints one line per check, `ok <check>: what was seen` or
// `FAIL <check>: why`, and exits 1 if any failed (2 on bad usage).

import { spawn } from "node:child_process";
import { connect as tcpConnect } from "node:net";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const usage =
  "usage: node bridge_client.mjs --sdk SDK_DIR --server everything|python [--wire-log FILE] [--http PORT] -- COMMAND [ARGS...]";

function parseArgs(argv) {
  const options = { sdk: null, server: null, wireLog: null, http: null, command: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      options.command = argv.slice(i + 1);
      break;
    } else if (arg === "--sdk") {
      options.sdk = argv[++i];
    } else if (arg === "--server") {
      options.server = argv[++i];
    } else if (arg === "--wire-log") {
      options.wireLog = argv[++i];
    } else if (arg === "--http") {
      options.http = Number(argv[++i]);
    } else {
      return null;
    }
  }
  if (!options.sdk || !["everything", "python"].includes(options.server) || options.command.length === 0) {
    return null;
  }
  return options;
}

// What differs between the servers: tool names, arguments, answers.
const PROFILES = {
  everything: {
    tools: ["echo", "trigger-elicitation-request", "trigger-long-running-operation"],
    echo: { name: "echo", arguments: { message: "héllo from the TypeScript SDK" } },
    echoed: "Echo: héllo from the TypeScript SDK",
    elicit: { name: "trigger-elicitation-request", arguments: {} },
    answer: { name: "Ada", check: true },
    // The answer, and the schema default the SDK filled in (applyDefaults).
    elicited: ["Name: Ada", "Favorite Integer: 42"],
    progress: { name: "trigger-long-running-operation", arguments: { duration: 0.4, steps: 4 } },
    steps: 4,
    slow: { name: "trigger-long-running-operation", arguments: { duration: 60, steps: 600 } },
    // server-everything does not watch its cancels: the wire log is the proof.
    cancelledOnStderr: null,
  },
  python: {
    tools: ["echo", "greet", "count", "slow"],
    echo: { name: "echo", arguments: { text: "héllo from the TypeScript SDK" } },
    echoed: "héllo from the TypeScript SDK",
    elicit: { name: "greet", arguments: {} },
    answer: { name: "Ada" },
    elicited: ["Hello, Ada!"],
    progress: { name: "count", arguments: { steps: 4 } },
    steps: 4,
    slow: { name: "slow", arguments: { seconds: 60 } },
    cancelledOnStderr: "interop-python: slow was cancelled",
  },
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function textOf(result) {
  return (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

/// Waits up to `ms` for `test()` to hold.
async function eventually(test, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (test()) return true;
    await sleep(25);
  }
  return test();
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!options) {
    console.error(usage);
    return 2;
  }
  const profile = PROFILES[options.server];
  const esm = (file) => pathToFileURL(join(options.sdk, "dist", "esm", file)).href;
  const { Client } = await import(esm("client/index.js"));
  const { StdioClientTransport } = await import(esm("client/stdio.js"));
  const { ElicitRequestSchema } = await import(esm("types.js"));
  const sdkVersion = JSON.parse(readFileSync(join(options.sdk, "package.json"), "utf8")).version;
  if (options.http) {
    const { StreamableHTTPClientTransport } = await import(esm("client/streamableHttp.js"));
    return pairOverHttp(options, profile, { Client, StreamableHTTPClientTransport, ElicitRequestSchema, sdkVersion });
  }

  let failures = 0;
  const ok = (check, seen) => console.log(`ok ${check}: ${seen}`);
  const fail = (check, why) => {
    failures++;
    console.log(`FAIL ${check}: ${String(why).replace(/\s+/g, " ").slice(0, 400)}`);
  };
  // Runs one check; a throw is its failure.
  const check = async (name, body) => {
    try {
      const seen = await body();
      ok(name, seen);
      return true;
    } catch (e) {
      fail(name, e?.message ?? e);
      return false;
    }
  };

  const transport = new StdioClientTransport({
    command: options.command[0],
    args: options.command.slice(1),
    stderr: "pipe",
  });
  let bridgeStderr = "";
  transport.stderr?.on("data", (chunk) => {
    bridgeStderr += chunk.toString();
  });
  const client = new Client(
    { name: "bridge-interop-typescript", version: sdkVersion },
    { capabilities: { elicitation: { form: { applyDefaults: true } } } },
  );
  const elicitations = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations.push(request.params.message);
    return { action: "accept", content: profile.answer };
  });

  // The client tells a transport the version it negotiated (HTTP needs
  // it); the stdio one has no use for it, so it is caught here to show.
  let negotiated = "?";
  transport.setProtocolVersion = (version) => {
    negotiated = version;
  };
  let bridge = null;
  const wire = [];
  const connected = await check("connect", async () => {
    await client.connect(transport);
    bridge = transport._process;
    // Every message as the transport read it, before the SDK acts on it.
    const handle = transport.onmessage;
    transport.onmessage = (message, extra) => {
      wire.push(message);
      handle(message, extra);
    };
    const info = client.getServerVersion();
    return `${info?.name} ${info?.version}, protocol ${negotiated}, TypeScript SDK ${sdkVersion}`;
  });
  if (!connected) {
    console.log(`bridge stderr: ${bridgeStderr.slice(-800)}`);
    return 1;
  }

  await check("list-tools", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    const missing = profile.tools.filter((t) => !names.includes(t));
    if (missing.length > 0) throw new Error(`missing ${missing.join(", ")} in ${names.join(", ")}`);
    return `${names.length} tools, ${profile.tools.join(", ")} among them`;
  });

  await check("echo", async () => {
    const text = textOf(await client.callTool(profile.echo));
    if (!text.includes(profile.echoed)) throw new Error(`got ${JSON.stringify(text)}`);
    return JSON.stringify(text);
  });

  await check("elicitation", async () => {
    const before = elicitations.length;
    const text = textOf(await client.callTool(profile.elicit));
    const asked = elicitations.length - before;
    if (asked !== 1) throw new Error(`the handler was asked ${asked} times`);
    const lacking = profile.elicited.filter((w) => !text.includes(w));
    if (lacking.length > 0) throw new Error(`result lacks ${lacking.join(", ")}: ${text}`);
    return `handler asked once; result has ${profile.elicited.join(", ")}`;
  });

  await check("progress", async () => {
    const seen = [];
    const from = wire.length;
    await client.callTool(profile.progress, undefined, {
      onprogress: (p) => seen.push(`${p.progress}/${p.total}`),
    });
    const want = Array.from({ length: profile.steps }, (_, i) => `${i + 1}/${profile.steps}`).join(" ");
    // What the bridge relayed: the call's progress, in order, before its
    // answer. The SDK's handler may miss the last step: it handles a
    // notification a tick after the messages read with it, and an answer
    // read in the same chunk has by then removed the call's handler (so
    // it happens straight from server-everything too).
    const read = wire.slice(from);
    const answer = read.findIndex((m) => "result" in m || "error" in m);
    const relayed = read
      .slice(0, answer < 0 ? read.length : answer)
      .filter((m) => m.method === "notifications/progress")
      .map((m) => `${m.params.progress}/${m.params.total}`)
      .join(" ");
    if (relayed !== want) throw new Error(`the bridge relayed progress ${relayed} before the answer, wanted ${want}`);
    const handled = seen.join(" ");
    if (handled === want) return handled;
    if (want.startsWith(handled) && seen.length === profile.steps - 1) {
      return `${want} relayed before the answer; the SDK's handler saw ${handled} (it drops a progress read with the answer)`;
    }
    throw new Error(`the SDK's handler saw progress ${handled}, wanted ${want}`);
  });

  await check("cancel", async () => {
    const controller = new AbortController();
    let progressed = 0;
    const started = Date.now();
    const call = client.callTool(profile.slow, undefined, {
      signal: controller.signal,
      // Abort once the server is at work.
      onprogress: () => {
        progressed++;
        if (progressed === 1) controller.abort("the user stopped it");
      },
      timeout: 60_000,
    });
    let outcome;
    try {
      await call;
      outcome = "it returned";
    } catch (e) {
      outcome = e;
    }
    const took = Date.now() - started;
    if (!controller.signal.aborted) throw new Error(`no progress came, and ${outcome}`);
    if (typeof outcome === "string") throw new Error("the call returned after the abort");
    if (took > 20_000) throw new Error(`the abort took ${took} ms`);
    const seen = [`aborted after ${took} ms`];
    if (options.wireLog) {
      const relayed = () => {
        try {
          return readFileSync(options.wireLog, "utf8")
            .split("\n")
            .some((l) => /^\s*[\d.]+ > /.test(l) && l.includes('"notifications/cancelled"'));
        } catch {
          return false;
        }
      };
      if (!(await eventually(relayed, 5_000))) {
        throw new Error(`no notifications/cancelled reached the server (wire log ${options.wireLog})`);
      }
      seen.push("the bridge sent the server notifications/cancelled");
    }
    if (profile.cancelledOnStderr) {
      if (!(await eventually(() => bridgeStderr.includes(profile.cancelledOnStderr), 5_000))) {
        throw new Error(`the server did not say ${JSON.stringify(profile.cancelledOnStderr)}`);
      }
      seen.push("the server stopped the call");
    }
    return seen.join("; ");
  });

  await check("after-cancel", async () => {
    const text = textOf(await client.callTool(profile.echo));
    if (!text.includes(profile.echoed)) throw new Error(`got ${JSON.stringify(text)}`);
    return "echo works";
  });

  // The SDK ends the bridge's stdin, waits 2 s, then sends SIGTERM: the
  // bridge must have left on its own, with status 0.
  await check("close", async () => {
    const exited = new Promise((resolve) => {
      if (bridge === null || bridge.exitCode !== null) resolve();
      else bridge.once("exit", resolve);
    });
    const started = Date.now();
    await client.close();
    await exited;
    const took = Date.now() - started;
    if (bridge.exitCode !== 0) {
      throw new Error(`the bridge ended with ${bridge.exitCode ?? bridge.signalCode} after ${took} ms`);
    }
    return `the bridge exited 0 in ${took} ms`;
  });
  if (failures > 0) console.log(`bridge stderr: ${bridgeStderr.slice(-800).replace(/\n/g, " | ")}`);
  return failures > 0 ? 1 : 0;
}

/// Waits up to 20 s for something to listen on the port.
async function listening(port, child) {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return false;
    const up = await new Promise((resolve) => {
      const socket = tcpConnect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (up) return true;
    await sleep(50);
  }
  return false;
}

/// Two clients at once over HTTP through one bridge: each gets its own
/// session (and server), its own elicitation, its own progress.
async function pairOverHttp(options, profile, sdk) {
  const { Client, StreamableHTTPClientTransport, ElicitRequestSchema, sdkVersion } = sdk;
  let failures = 0;
  const check = async (name, body) => {
    try {
      console.log(`ok ${name}: ${await body()}`);
    } catch (e) {
      failures++;
      console.log(`FAIL ${name}: ${String(e?.message ?? e).replace(/\s+/g, " ").slice(0, 400)}`);
    }
  };
  const bridge = spawn(options.command[0], options.command.slice(1), { stdio: ["ignore", "ignore", "pipe"] });
  let bridgeStderr = "";
  bridge.stderr.on("data", (chunk) => {
    bridgeStderr += chunk.toString();
  });
  const exited = new Promise((resolve) => bridge.once("exit", resolve));
  if (!(await listening(options.http, bridge))) {
    console.log(`FAIL connect: the bridge did not listen on port ${options.http}`);
    console.log(`bridge stderr: ${bridgeStderr.slice(-800)}`);
    bridge.kill("SIGKILL");
    return 1;
  }
  const url = new URL(`http://127.0.0.1:${options.http}/mcp`);
  const people = ["Ada", "Bob"].map((name) => {
    const client = new Client(
      { name: `bridge-interop-typescript-${name}`, version: sdkVersion },
      { capabilities: { elicitation: { form: { applyDefaults: true } } } },
    );
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { ...profile.answer, name } };
    });
    return { name, client, asked, transport: new StreamableHTTPClientTransport(url) };
  });
  const both = (f) => Promise.all(people.map(f));
  await check("connect", async () => {
    await both((p) => p.client.connect(p.transport));
    const sessions = people.map((p) => p.transport.sessionId);
    if (!sessions[0] || sessions[0] === sessions[1]) throw new Error(`sessions ${sessions.join(", ")}`);
    const info = people[0].client.getServerVersion();
    return `two clients, two sessions, ${info?.name} ${info?.version}, TypeScript SDK ${sdkVersion} over HTTP`;
  });
  await check("list-tools", async () => {
    const lists = await both((p) => p.client.listTools());
    for (const { tools } of lists) {
      const names = tools.map((t) => t.name);
      const missing = profile.tools.filter((t) => !names.includes(t));
      if (missing.length > 0) throw new Error(`missing ${missing.join(", ")} in ${names.join(", ")}`);
    }
    return `each lists ${profile.tools.join(", ")} among its tools`;
  });
  await check("echo", async () => {
    const texts = await both(async (p) => textOf(await p.client.callTool(profile.echo)));
    if (!texts.every((t) => t.includes(profile.echoed))) throw new Error(`got ${JSON.stringify(texts)}`);
    return "both echoed";
  });
  await check("elicitation", async () => {
    const texts = await both(async (p) => textOf(await p.client.callTool(profile.elicit)));
    people.forEach((p, i) => {
      const other = people[1 - i].name;
      const want = profile.elicited.map((w) => w.replace("Ada", p.name));
      if (p.asked.length !== 1) throw new Error(`${p.name}'s handler was asked ${p.asked.length} times`);
      const lacking = want.filter((w) => !texts[i].includes(w));
      if (lacking.length > 0 || texts[i].includes(other)) {
        throw new Error(`${p.name}'s result ${JSON.stringify(texts[i])}, wanted ${want.join(", ")}`);
      }
    });
    return `at once: each handler asked once, Ada's result has ${profile.elicited.join(", ")}, Bob's his own`;
  });
  await check("progress", async () => {
    const seen = await both(async (p) => {
      const steps = [];
      await p.client.callTool(profile.progress, undefined, {
        onprogress: (n) => steps.push(`${n.progress}/${n.total}`),
      });
      return steps.join(" ");
    });
    const want = Array.from({ length: profile.steps }, (_, i) => `${i + 1}/${profile.steps}`).join(" ");
    if (!seen.every((s) => s === want)) throw new Error(`progress ${JSON.stringify(seen)}, wanted ${want}`);
    return `each saw ${want}`;
  });
  await check("cancel", async () => {
    const controller = new AbortController();
    const started = Date.now();
    let progressed = 0;
    const call = people[0].client.callTool(profile.slow, undefined, {
      signal: controller.signal,
      onprogress: () => {
        if (++progressed === 1) controller.abort("the user stopped it");
      },
      timeout: 60_000,
    });
    // Bob works on meanwhile.
    const bob = people[1].client.callTool(profile.echo);
    const outcome = await call.then(
      () => "it returned",
      (e) => e,
    );
    if (typeof outcome === "string") throw new Error("the call returned after the abort");
    if (!textOf(await bob).includes(profile.echoed)) throw new Error("Bob's call failed");
    const seen = [`Ada aborted after ${Date.now() - started} ms while Bob's echo went through`];
    if (profile.cancelledOnStderr) {
      if (!(await eventually(() => bridgeStderr.includes(profile.cancelledOnStderr), 5_000))) {
        throw new Error(`the server did not say ${JSON.stringify(profile.cancelledOnStderr)}`);
      }
      seen.push("the server stopped the call");
    }
    return seen.join("; ");
  });
  await check("after-cancel", async () => {
    const texts = await both(async (p) => textOf(await p.client.callTool(profile.echo)));
    if (!texts.every((t) => t.includes(profile.echoed))) throw new Error(`got ${JSON.stringify(texts)}`);
    return "both echo";
  });
  await check("close", async () => {
    await both(async (p) => {
      await p.transport.terminateSession();
      await p.client.close();
    });
    const started = Date.now();
    bridge.kill("SIGTERM");
    const code = await Promise.race([exited.then(() => bridge.exitCode ?? bridge.signalCode), sleep(5_000).then(() => "still running")]);
    const took = Date.now() - started;
    if (code !== 0) {
      bridge.kill("SIGKILL");
      throw new Error(`after SIGTERM: ${code} (${took} ms)`);
    }
    return `both sessions deleted; SIGTERM ended the bridge in ${took} ms (exit 0)`;
  });
  if (failures > 0) console.log(`bridge stderr: ${bridgeStderr.slice(-800).replace(/\n/g, " | ")}`);
  return failures > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.log(`FAIL client: ${e?.stack ?? e}`);
    process.exit(1);
  },
);
