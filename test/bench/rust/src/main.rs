//! The kube-rs peer of edgeop's benchmark suite (test/bench/run.ts).
//!
//! Same protocol as the other peers: argv[1] is a JSON job; one JSON object per line
//! on stdout ({"event": "ready" | "synced" | "settled" | "result", ...}); commands on
//! stdin ("go", "stop"); exits on "stop" or at end of input.

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector;
use kube::runtime::watcher::{self, Event};
use kube::{Client, Config, Resource, ResourceExt};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};

const STAMP: &str = "bench.edgeop.dev/written-at";

type Input = Lines<BufReader<Stdin>>;

fn emit(event: &str, mut fields: Value) {
    fields["event"] = json!(event);
    println!("{fields}");
}

async fn wait_for(input: &mut Input, want: &str) -> bool {
    while let Ok(Some(line)) = input.next_line().await {
        if line == want {
            return true;
        }
        if line == "stop" {
            return false;
        }
    }
    false
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

async fn client(job: &Value) -> Client {
    let path = job["kubeconfig"].as_str().expect("kubeconfig");
    let kc = Kubeconfig::read_from(path).expect("read kubeconfig");
    let cfg = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig");
    Client::try_from(cfg).expect("client")
}

/// This process's user+system CPU seconds (every thread) from /proc/self/stat, in 10 ms ticks.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = &stat[stat.rfind(')').map(|i| i + 2).unwrap_or(0)..];
    let f: Vec<&str> = after.split(' ').collect();
    let tick = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// Counts the update events of a replay from the driver's "go" and times them with the process's
/// CPU clock; the result is taken in the stream's callback when the last expected event arrives.
struct Counter {
    armed: AtomicBool,
    count: AtomicU64,
    expect: u64,
    start: Mutex<(f64, Option<Instant>)>,
    result: Mutex<Option<(f64, f64)>>,
}

impl Counter {
    fn hit(&self) {
        if !self.armed.load(Ordering::Acquire) {
            return;
        }
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.expect {
            let (cpu0, t0) = *self.start.lock().unwrap();
            let wall = t0.map(|t| t.elapsed().as_secs_f64() * 1000.0).unwrap_or(0.0);
            *self.result.lock().unwrap() = Some((cpu_seconds() - cpu0, wall));
        }
    }
}

/// Starts a reflector in the job's mode; resolves when its store is ready, with the time taken
/// and a closure counting cached objects. Watch events on Pods with the stamp feed `lat`.
async fn reflect(
    job: &Value,
    client: Client,
    lat: Option<Arc<Mutex<Vec<f64>>>>,
    counter: Option<Arc<Counter>>,
) -> (f64, Box<dyn Fn() -> usize + Send>) {
    let ns = job["namespace"].as_str().expect("namespace");
    let mode = job["mode"].as_str().unwrap_or("full").to_string();
    let api: Api<Pod> = Api::namespaced(client, ns);
    let t0 = Instant::now();
    if mode == "metadata" {
        let meta: Api<PartialObjectMeta<Pod>> = Api::namespaced(api.into_client(), ns);
        let (reader, writer) = reflector::store();
        let stream = kube::runtime::watcher(meta, watcher::Config::default())
            .default_backoff()
            .modify(|o| o.managed_fields_mut().clear())
            .reflect(writer);
        tokio::spawn(stream.for_each(|_| futures::future::ready(())));
        reader.wait_until_ready().await.expect("ready");
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        return (ms, Box::new(move || reader.state().len()));
    }
    let strip = mode == "strip";
    let (reader, writer) = reflector::store();
    let stream = watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(move |p: &mut Pod| {
            if strip {
                p.managed_fields_mut().clear();
            }
        })
        .reflect(writer);
    // One latency sample per new stamp seen on an object, as the other peers count them.
    let mut last: HashMap<String, String> = HashMap::new();
    tokio::spawn(stream.for_each(move |ev| {
        if let (Some(c), Ok(Event::Apply(_))) = (&counter, &ev) {
            c.hit();
        }
        if let (Some(lat), Ok(Event::Apply(p))) = (&lat, &ev) {
            if let Some(stamp) = p.annotations().get(STAMP) {
                let now = now_us();
                if last.insert(p.name_any(), stamp.clone()).as_ref() != Some(stamp) {
                    if let Ok(us) = stamp.parse::<i64>() {
                        lat.lock().unwrap().push((now - us) as f64 / 1000.0);
                    }
                }
            }
        }
        futures::future::ready(())
    }));
    reader.wait_until_ready().await.expect("ready");
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    (ms, Box::new(move || reader.state().len()))
}

fn watcher(
    api: Api<Pod>,
    cfg: watcher::Config,
) -> impl futures::Stream<Item = watcher::Result<Event<Pod>>> {
    kube::runtime::watcher(api, cfg)
}

#[tokio::main]
async fn main() {
    let arg = std::env::args()
        .nth(1)
        .expect("usage: edgeop-bench-rs '<job json>'");
    let job: Value = serde_json::from_str(&arg).expect("job json");
    let mut input = BufReader::new(tokio::io::stdin()).lines();
    let workload = job["workload"].as_str().unwrap_or("").to_string();
    match workload.as_str() {
        "coldstart" => {
            let c = client(&job).await;
            emit("ready", json!({}));
            let (ms, count) = reflect(&job, c, None, None).await;
            emit("synced", json!({"syncMs": ms, "count": count()}));
            wait_for(&mut input, "stop").await;
        }
        "memory" => {
            let c = client(&job).await;
            emit("ready", json!({}));
            if !wait_for(&mut input, "go").await {
                return;
            }
            let (ms, count) = reflect(&job, c, None, None).await;
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            emit("settled", json!({"syncMs": ms, "count": count()}));
            wait_for(&mut input, "stop").await;
        }
        "watch" => {
            let c = client(&job).await;
            let lat = Arc::new(Mutex::new(Vec::new()));
            let (ms, count) = reflect(&job, c, Some(lat.clone()), None).await;
            // Events before the sync (the initial list) carry old stamps: drop them.
            lat.lock().unwrap().clear();
            emit("synced", json!({"syncMs": ms, "count": count()}));
            wait_for(&mut input, "stop").await;
            let l = lat.lock().unwrap().clone();
            emit("result", json!({"latenciesMs": l}));
        }
        "replay" => {
            let c = client(&job).await;
            let counter = Arc::new(Counter {
                armed: AtomicBool::new(false),
                count: AtomicU64::new(0),
                expect: job["expect"].as_u64().unwrap_or(0),
                start: Mutex::new((0.0, None)),
                result: Mutex::new(None),
            });
            let (ms, count) = reflect(&job, c, None, Some(counter.clone())).await;
            emit("synced", json!({"syncMs": ms, "count": count()}));
            if !wait_for(&mut input, "go").await {
                return;
            }
            *counter.start.lock().unwrap() = (cpu_seconds(), Some(Instant::now()));
            counter.armed.store(true, Ordering::Release);
            emit("armed", json!({}));
            let (cpu, wall) = loop {
                if let Some(r) = *counter.result.lock().unwrap() {
                    break r;
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            };
            emit("result", json!({"events": counter.expect, "cpuSeconds": cpu, "wallMs": wall}));
            wait_for(&mut input, "stop").await;
        }
        "list" => {
            let c = client(&job).await;
            let ns = job["namespace"].as_str().expect("namespace");
            let api: Api<Pod> = Api::namespaced(c, ns);
            emit("ready", json!({}));
            let iterations = job["iterations"].as_u64().unwrap_or(3);
            let mut times = Vec::new();
            let mut count = 0;
            for i in 0..=iterations {
                let t0 = Instant::now();
                let l = api.list(&ListParams::default()).await.expect("list");
                let d = t0.elapsed().as_secs_f64() * 1000.0;
                count = l.items.len();
                if i > 0 {
                    times.push(d);
                }
            }
            emit("result", json!({"timesMs": times, "count": count}));
            wait_for(&mut input, "stop").await;
        }
        "version" => emit("result", json!({"kube": "5.0.0"})),
        other => {
            eprintln!("edgeop-bench-rs: unknown workload {other:?}");
            std::process::exit(1);
        }
    }
    let _ = Pod::kind(&());
}
