// Command edgeop-bench-go is the client-go peer of edgeop's benchmark suite
// (test/bench/run.ts). It does the same work as the TypeScript peers
// (test/bench/peers/*.ts): a shared informer for Pods, a list, a workqueue loop.
//
// Protocol (shared by every peer): argv[1] is a JSON job; the program writes one
// JSON object per line on stdout ({"event": "ready" | "synced" | "settled" |
// "result", ...}) and waits for lines on stdin ("go", "stop"); it exits on "stop"
// or at end of input. The driver reads CPU time and RSS from /proc/<pid> between
// messages, so the numbers are taken the same way for every language.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

// StampAnnotation carries the writer's wall clock (Unix microseconds) at the time of the write.
const StampAnnotation = "bench.edgeop.dev/written-at"

type job struct {
	Workload   string `json:"workload"`
	Kubeconfig string `json:"kubeconfig"`
	Namespace  string `json:"namespace"`
	Expect     int    `json:"expect"`
	Mode       string `json:"mode"`
	Iterations int    `json:"iterations"`
	Cycles     int    `json:"cycles"`
	Protobuf   bool   `json:"protobuf"`
	Wire       string `json:"wire"`
}

var (
	out   = json.NewEncoder(os.Stdout)
	stdin = bufio.NewScanner(os.Stdin)
)

func emit(event string, fields map[string]any) {
	if fields == nil {
		fields = map[string]any{}
	}
	fields["event"] = event
	if err := out.Encode(fields); err != nil {
		os.Exit(3)
	}
}

// waitFor blocks until the driver sends `want` (or stdin ends, which means stop).
func waitFor(want string) bool {
	for stdin.Scan() {
		if stdin.Text() == want {
			return true
		}
		if stdin.Text() == "stop" {
			return false
		}
	}
	return false
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "edgeop-bench-go:", err)
	os.Exit(1)
}

func config(j job) *rest.Config {
	cfg, err := clientcmd.BuildConfigFromFlags("", j.Kubeconfig)
	if err != nil {
		fail(err)
	}
	cfg.QPS = -1 // no client-side throttling, like the TypeScript peers
	// The wire format is always set: client-go's typed clients default to protobuf when it is not,
	// so a "JSON" row without these lines measured protobuf.
	if j.Protobuf || j.Wire == "protobuf" {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	} else {
		cfg.ContentType = "application/json"
		cfg.AcceptContentTypes = "application/json"
	}
	return cfg
}

// podInformer builds the informer the mode asks for: full Pods, Pods without
// managedFields, or PartialObjectMetadata without managedFields.
func podInformer(j job) cache.SharedIndexInformer {
	cfg := config(j)
	strip := func(o any) (any, error) {
		if m, ok := o.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
		return o, nil
	}
	switch j.Mode {
	case "metadata":
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			fail(err)
		}
		gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
		inf := metadatainformer.NewFilteredMetadataInformer(mc, gvr, j.Namespace, 0, cache.Indexers{}, nil).Informer()
		if err := inf.SetTransform(strip); err != nil {
			fail(err)
		}
		return inf
	default:
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			fail(err)
		}
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(j.Namespace))
		inf := f.Core().V1().Pods().Informer()
		if j.Mode == "strip" {
			if err := inf.SetTransform(strip); err != nil {
				fail(err)
			}
		}
		return inf
	}
}

func startAndSync(inf cache.SharedIndexInformer, stop chan struct{}) float64 {
	t0 := time.Now()
	go inf.Run(stop)
	// cache.WaitForCacheSync polls every 100 ms; poll every millisecond so the
	// measurement is not rounded up to the next 100 ms.
	for !inf.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	return float64(time.Since(t0).Microseconds()) / 1000
}

func settledHeap() uint64 {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func coldstart(j job) {
	inf := podInformer(j)
	emit("ready", nil)
	stop := make(chan struct{})
	ms := startAndSync(inf, stop)
	emit("synced", map[string]any{"syncMs": ms, "count": len(inf.GetStore().ListKeys())})
	waitFor("stop")
	close(stop)
}

func memory(j job) {
	inf := podInformer(j)
	base := settledHeap()
	emit("ready", map[string]any{"heap": base})
	if !waitFor("go") {
		return
	}
	stop := make(chan struct{})
	ms := startAndSync(inf, stop)
	settledHeap()
	time.Sleep(time.Second)
	heap := settledHeap()
	emit("settled", map[string]any{"syncMs": ms, "count": len(inf.GetStore().ListKeys()), "heap": heap})
	waitFor("stop")
	close(stop)
}

func watch(j job) {
	inf := podInformer(j)
	var mu sync.Mutex
	lat := make([]float64, 0, 1<<16)
	seen := map[string]string{}
	record := func(o any) {
		m, ok := o.(metav1.Object)
		if !ok {
			return
		}
		stamp := m.GetAnnotations()[StampAnnotation]
		if stamp == "" {
			return
		}
		now := time.Now().UnixMicro()
		key := m.GetNamespace() + "/" + m.GetName()
		mu.Lock()
		defer mu.Unlock()
		if seen[key] == stamp {
			return
		}
		seen[key] = stamp
		us, err := strconv.ParseInt(stamp, 10, 64)
		if err == nil {
			lat = append(lat, float64(now-us)/1000)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, n any) { record(n) },
	}); err != nil {
		fail(err)
	}
	stop := make(chan struct{})
	ms := startAndSync(inf, stop)
	emit("synced", map[string]any{"syncMs": ms, "count": len(inf.GetStore().ListKeys())})
	waitFor("stop")
	mu.Lock()
	emit("result", map[string]any{"latenciesMs": lat})
	mu.Unlock()
	close(stop)
}

// cpuSeconds is this process's user+system CPU time so far (every thread).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fail(err)
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// replay counts the update events the replay server's stream delivers to a handler and times
// them with the process's own CPU clock, from the driver's "go" to the last expected event.
func replay(j job) {
	inf := podInformer(j)
	var count atomic.Int64
	var armed atomic.Bool
	done := make(chan map[string]any, 1)
	var cpu0 float64
	var t0 time.Time
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, _ any) {
			if !armed.Load() {
				return
			}
			if count.Add(1) == int64(j.Expect) {
				done <- map[string]any{
					"events":     j.Expect,
					"cpuSeconds": cpuSeconds() - cpu0,
					"wallMs":     float64(time.Since(t0).Microseconds()) / 1000,
				}
			}
		},
	}); err != nil {
		fail(err)
	}
	stop := make(chan struct{})
	ms := startAndSync(inf, stop)
	emit("synced", map[string]any{"syncMs": ms, "count": len(inf.GetStore().ListKeys())})
	if !waitFor("go") {
		close(stop)
		return
	}
	cpu0 = cpuSeconds()
	t0 = time.Now()
	armed.Store(true)
	emit("armed", nil)
	emit("result", <-done)
	waitFor("stop")
	close(stop)
}

func list(j job) {
	cs, err := kubernetes.NewForConfig(config(j))
	if err != nil {
		fail(err)
	}
	emit("ready", nil)
	ctx := context.Background()
	times := []float64{}
	count := 0
	for i := 0; i <= j.Iterations; i++ { // the first is a warm-up
		t0 := time.Now()
		l, err := cs.CoreV1().Pods(j.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			fail(err)
		}
		d := float64(time.Since(t0).Microseconds()) / 1000
		count = len(l.Items)
		if i > 0 {
			times = append(times, d)
		}
	}
	emit("result", map[string]any{"timesMs": times, "count": count})
	waitFor("stop")
}

// ---- workqueue: the same cycles as test/bench/queue.bench.ts ----

const workingSet = 100_000

var keys = func() []string {
	k := make([]string, workingSet)
	for i := range k {
		k[i] = "namespace-" + strconv.Itoa(i%97) + "/object-" + strconv.Itoa(i)
	}
	return k
}()

func key(i int) string { return keys[i%workingSet] }

func serial(q workqueue.TypedInterface[string], n int) {
	for i := 0; i < n; i++ {
		q.Add(key(i))
		item, shutdown := q.Get()
		if !shutdown {
			q.Done(item)
		}
	}
}

func batched(q workqueue.TypedInterface[string], n int) {
	const batch = 1000
	for i := 0; i < n; i += batch {
		for j := 0; j < batch; j++ {
			q.Add(key(i + j))
		}
		for j := 0; j < batch; j++ {
			item, _ := q.Get()
			q.Done(item)
		}
	}
}

// handOff: one worker goroutine blocked in Get; the main goroutine adds. Keys
// may coalesce when the worker falls behind (as in any workqueue), so the rate
// counts adds; the run ends when the worker has drained everything.
func handOff(q workqueue.TypedInterface[string], n int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			item, shutdown := q.Get()
			if shutdown {
				return
			}
			q.Done(item)
		}
	}()
	for i := 0; i < n; i++ {
		q.Add(key(i))
	}
	q.ShutDownWithDrain()
	wg.Wait()
}

func rateLimited(n int) {
	q := workqueue.NewTypedRateLimitingQueue(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Millisecond))
	const batch = 10_000
	for i := 0; i < n; i += batch {
		for j := 0; j < batch; j++ {
			q.AddRateLimited(key(i + j))
		}
		for j := 0; j < batch; j++ {
			item, _ := q.Get()
			q.Forget(item)
			q.Done(item)
		}
	}
	q.ShutDown()
}

func measure(run func(n int), n int) float64 {
	run(min(n, 200_000)) // warm-up
	const runs = 5
	rates := make([]float64, 0, runs)
	for r := 0; r < runs; r++ {
		runtime.GC()
		t0 := time.Now()
		run(n)
		rates = append(rates, float64(n)/time.Since(t0).Seconds())
	}
	slices.Sort(rates)
	return rates[runs/2]
}

func queue(j job) {
	n := j.Cycles
	if n <= 0 {
		n = 2_000_000
	}
	emit("ready", nil)
	rows := []map[string]any{}
	add := func(id string, rate float64) {
		rows = append(rows, map[string]any{"id": id, "opsPerSec": rate})
	}
	add("serial", measure(func(n int) { q := workqueue.NewTyped[string](); serial(q, n); q.ShutDown() }, n))
	add("batched", measure(func(n int) { q := workqueue.NewTyped[string](); batched(q, n); q.ShutDown() }, n))
	add("handoff", measure(func(n int) { handOff(workqueue.NewTyped[string](), n) }, n))
	add("rl-serial", measure(func(n int) {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
		serial(q, n)
		q.ShutDown()
	}, n))
	add("add-rate-limited", measure(rateLimited, n/4))
	emit("result", map[string]any{"rows": rows, "gomaxprocs": runtime.GOMAXPROCS(0)})
	waitFor("stop")
}

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: edgeop-bench-go '<job json>'"))
	}
	var j job
	if err := json.Unmarshal([]byte(os.Args[1]), &j); err != nil {
		fail(err)
	}
	_ = corev1.Pod{}
	switch j.Workload {
	case "coldstart":
		coldstart(j)
	case "memory":
		memory(j)
	case "watch":
		watch(j)
	case "replay":
		replay(j)
	case "list":
		list(j)
	case "queue":
		queue(j)
	case "version":
		emit("result", map[string]any{"go": runtime.Version()})
	default:
		fail(fmt.Errorf("unknown workload %q", j.Workload))
	}
}
