//! What the proxy adds to a request without tool results (target: at most 1 ms at the p50),
//! and to the first byte of a streamed answer (target: within 5 ms).
//!
//! `cargo bench -p parrot-serve` starts a scripted upstream (an in-process hyper server that
//! answers every request with the same canned JSON, or the same two server-sent events) and
//! the proxy in front of it (in-process, with a host as `parrot-compress serve` builds it: a
//! memory tee store, originals of lossless results kept), then sends the same Anthropic
//! Messages request (a system prompt and one user message, about 1 KB, no tool results: the
//! body is read, goes through the rewrite, which finds nothing, and is sent on) directly and
//! through the proxy, alternating, over kept-alive connections; and the streamed request once
//! more with a tool definition, so that the proxy adds its recovery tool and reads the answer's
//! events to see whether the model calls it (its events go on as they come, renumbered when
//! needed). It prints a Markdown table of
//! the p50s and their difference, and writes it (`serve.md`) and its target line
//! (`targets-serve.md`) to `PARROT_BENCH_REPORT` when that is set; then the same two requests
//! as criterion benchmarks. `PARROT_BENCH_QUICK` takes fewer samples.

use std::convert::Infallible;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::Criterion;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use parrot_host::{Host, MemoryTeeStore};
use parrot_serve::{Config, Server, Upstream};

const ANSWER: &str = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"Hello."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":3}}"#;

const FIRST_EVENT: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-test\",\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n";

const LAST_EVENT: &str = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

/// The request: no tool results, about 1 KB; with `tools`, one tool definition, so that the
/// proxy offers its recovery tool and watches the answer for its calls.
fn request_body(stream: bool, tools: bool) -> String {
    let system = "You are a helpful assistant. ".repeat(24);
    let tools = if tools {
        r#","tools":[{"name":"bash","description":"Runs a command.","input_schema":{"type":"object"}}]"#
    } else {
        ""
    };
    format!(
        r#"{{"model":"claude-test","max_tokens":1024,"stream":{stream},"system":"{system}"{tools},"messages":[{{"role":"user","content":"Say hello, and nothing else; this request carries no tool results at all."}}]}}"#
    )
}

type Boxed = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// The scripted upstream: JSON for a plain request, two events (the second after 20 ms) for a
/// streamed one.
async fn upstream(request: Request<Incoming>) -> Result<Response<Boxed>, Infallible> {
    let body = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let streamed = body.windows(13).any(|w| w == b"\"stream\":true");
    let (body, kind): (Boxed, _) = if streamed {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            let _ = tx.send(Bytes::from_static(FIRST_EVENT.as_bytes())).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
            let _ = tx.send(Bytes::from_static(LAST_EVENT.as_bytes())).await;
        });
        (Events(rx).boxed(), "text/event-stream")
    } else {
        (
            Full::new(Bytes::from_static(ANSWER.as_bytes())).boxed(),
            "application/json",
        )
    };
    let mut response = Response::new(body);
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static(kind),
    );
    Ok(response)
}

/// Events from a channel, as a body.
struct Events(tokio::sync::mpsc::Receiver<Bytes>);

impl hyper::body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|event| event.map(|bytes| Ok(hyper::body::Frame::data(bytes))))
    }
}

/// Serves the scripted upstream on a free loopback port.
async fn start_upstream() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), hyper::service::service_fn(upstream)),
            );
        }
    });
    addr
}

/// Starts the proxy in front of `upstream`; its address.
async fn start_proxy(upstream: SocketAddr, project: &std::path::Path) -> SocketAddr {
    let host = Host::builder()
        .project(project)
        .plugin_path(None)
        .tee_lossless(true)
        .tee_store(Arc::new(MemoryTeeStore::default()))
        .build()
        .expect("a host");
    let url = Upstream::parse(&format!("http://{upstream}")).unwrap();
    let config = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        anthropic: url.clone(),
        openai: url,
        tokenizer: "o200k_base".to_owned(),
        max_body_bytes: parrot_serve::DEFAULT_MAX_BODY_BYTES,
        max_connections: parrot_serve::DEFAULT_MAX_CONNECTIONS,
        header_read_timeout: parrot_serve::DEFAULT_HEADER_READ_TIMEOUT,
        shared_unscoped: false,
    };
    let server = Server::bind(config, Some(Arc::new(host))).await.unwrap();
    let addr = server.local_addr();
    tokio::spawn(server.run(std::future::pending()));
    addr
}

type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// One request to `addr`: the time to the whole answer, or (streamed) to its first byte.
async fn timed(client: &HttpClient, addr: SocketAddr, body: &str, stream: bool) -> Duration {
    let request = Request::post(format!("http://{addr}/v1/messages"))
        .header("content-type", "application/json")
        .header("x-api-key", "sk-ant-bench")
        .header("anthropic-version", "2023-06-01")
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap();
    let started = Instant::now();
    let response = client.request(request).await.expect("an answer");
    let mut body = response.into_body();
    let mut first = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.expect("a frame");
        if first.is_none() && frame.data_ref().is_some_and(|d| !d.is_empty()) {
            first = Some(started.elapsed());
        }
    }
    let whole = started.elapsed();
    if stream {
        first.unwrap_or(whole)
    } else {
        whole
    }
}

fn p50(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let quick = std::env::var_os("PARROT_BENCH_QUICK").is_some();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let project = tempfile::tempdir().unwrap();
    let (upstream, proxy) = runtime.block_on(async {
        let upstream = start_upstream().await;
        (upstream, start_proxy(upstream, project.path()).await)
    });
    let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();

    let mut table = String::from(
        "`cargo bench -p parrot-serve`. The same Anthropic Messages request (about 1 KB, no tool \
         results) to an in-process scripted upstream, directly and through the proxy \
         (in-process, a memory tee store), alternating, over kept-alive connections on \
         loopback; p50 of the runs. Plain: the time to the whole answer (the proxy reads the \
         body, runs the rewrite, which finds nothing, and sends it on). Streamed: the time to \
         the answer's first byte (the upstream sends its second event 20 ms later); with tools, \
         the proxy adds its recovery tool and reads each event of the answer for its calls.\n\n\
         | request | runs | direct p50 | through the proxy p50 | the proxy adds |\n\
         |---|---|---|---|---|\n",
    );
    let mut targets = Vec::new();
    for (name, stream, tools, runs) in [
        (
            "plain, no tool results",
            false,
            false,
            if quick { 300 } else { 2000 },
        ),
        (
            "streamed, first byte",
            true,
            false,
            if quick { 50 } else { 200 },
        ),
        (
            "streamed with tools (the proxy watches for its tool's calls), first byte",
            true,
            true,
            if quick { 50 } else { 200 },
        ),
    ] {
        let body = request_body(stream, tools);
        let (direct, proxied) = runtime.block_on(async {
            // Warm up both paths (connections, the pipeline's first call).
            for _ in 0..20 {
                timed(&client, upstream, &body, stream).await;
                timed(&client, proxy, &body, stream).await;
            }
            let (mut direct, mut proxied) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                direct.push(timed(&client, upstream, &body, stream).await);
                proxied.push(timed(&client, proxy, &body, stream).await);
            }
            (p50(direct), p50(proxied))
        });
        let adds = proxied.saturating_sub(direct);
        let _ = writeln!(
            table,
            "| {name} | {runs} | {} ms | {} ms | {} ms |",
            ms(direct),
            ms(proxied),
            ms(adds)
        );
        let (target, limit) = if stream && tools {
            (
                "first byte of a streamed answer within 5 ms of the upstream's, the proxy's tool added",
                5.0,
            )
        } else if stream {
            (
                "first byte of a streamed answer within 5 ms of the upstream's",
                5.0,
            )
        } else {
            (
                "at most 1 ms p50 over a direct relay, a request without tool results",
                1.0,
            )
        };
        let added = adds.as_secs_f64() * 1000.0;
        targets.push(format!(
            "- `serve`: {target}: {} ms ({})",
            ms(adds),
            if added <= limit { "met" } else { "NOT met" }
        ));
    }
    println!("{table}");
    if let Some(dir) = std::env::var_os("PARROT_BENCH_REPORT") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for (name, text) in [
            ("serve.md", table.clone()),
            ("targets-serve.md", targets.join("\n") + "\n"),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    for line in &targets {
        println!("{line}");
    }

    let mut criterion = Criterion::default()
        .configure_from_args()
        .sample_size(if quick { 10 } else { 50 });
    let body = request_body(false, false);
    let mut group = criterion.benchmark_group("serve");
    group.bench_function("direct", |b| {
        b.iter(|| runtime.block_on(timed(&client, upstream, &body, false)))
    });
    group.bench_function("through_proxy", |b| {
        b.iter(|| runtime.block_on(timed(&client, proxy, &body, false)))
    });
    group.finish();
    criterion.final_summary();
}
