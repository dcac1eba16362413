// Command protobuf-schema writes the protobuf schema of the built-in kinds edgeop can decode, as a compact
// table in two files: src/codec/protobuf/messages.generated.ts (every message; the decoders take the few they
// need, Status and ListMeta, from it) and src/codec/protobuf/kinds.generated.ts (the kinds, each tied to the
// decoders). The kinds import the decoders and the decoders import the messages, so the two never
// import each other.
//
// The field numbers and wire types come from the types' `protobuf:` struct tags, which the Kubernetes
// code generator writes from the same definitions as the .proto files of k8s.io/api. The .proto files
// alone cannot say what the API server's JSON looks like: whether a field is a pointer (present even
// when zero), whether its JSON tag has omitempty or omitzero (absent when zero), and which embedded
// structs are promoted into their parent's JSON object. The Go types say all of it, so the generator
// reads them by reflection.
//
// Run: npm run gen:protobuf (or `go run . kinds > ../../src/codec/protobuf/kinds.generated.ts` and
// `go run . messages > ../../src/codec/protobuf/messages.generated.ts` in this directory).
package main

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A kind the table covers: its exported constant, apiVersion, kind and Go type.
type root struct {
	constName  string
	apiVersion string
	kind       string
	value      any
}

// The kinds of CORE_TYPES plus the common workload, networking and batch kinds. A bundle pays only
// for the kinds it imports: each message is its own constant.
var roots = []root{
	{"NAMESPACE_V1", "v1", "Namespace", corev1.Namespace{}},
	{"CONFIG_MAP_V1", "v1", "ConfigMap", corev1.ConfigMap{}},
	{"SECRET_V1", "v1", "Secret", corev1.Secret{}},
	{"SERVICE_V1", "v1", "Service", corev1.Service{}},
	{"SERVICE_ACCOUNT_V1", "v1", "ServiceAccount", corev1.ServiceAccount{}},
	{"POD_V1", "v1", "Pod", corev1.Pod{}},
	{"NODE_V1", "v1", "Node", corev1.Node{}},
	{"PERSISTENT_VOLUME_CLAIM_V1", "v1", "PersistentVolumeClaim", corev1.PersistentVolumeClaim{}},
	{"EVENT_CORE_V1", "v1", "Event", corev1.Event{}},
	{"DEPLOYMENT_V1", "apps/v1", "Deployment", appsv1.Deployment{}},
	{"REPLICA_SET_V1", "apps/v1", "ReplicaSet", appsv1.ReplicaSet{}},
	{"STATEFUL_SET_V1", "apps/v1", "StatefulSet", appsv1.StatefulSet{}},
	{"DAEMON_SET_V1", "apps/v1", "DaemonSet", appsv1.DaemonSet{}},
	{"JOB_V1", "batch/v1", "Job", batchv1.Job{}},
	{"CRON_JOB_V1", "batch/v1", "CronJob", batchv1.CronJob{}},
	{"LEASE_V1", "coordination.k8s.io/v1", "Lease", coordinationv1.Lease{}},
	{"EVENT_V1", "events.k8s.io/v1", "Event", eventsv1.Event{}},
	{"ENDPOINT_SLICE_V1", "discovery.k8s.io/v1", "EndpointSlice", discoveryv1.EndpointSlice{}},
	{"INGRESS_V1", "networking.k8s.io/v1", "Ingress", networkingv1.Ingress{}},
	{"PARTIAL_OBJECT_METADATA_V1", "meta.k8s.io/v1", "PartialObjectMetadata", metav1.PartialObjectMetadata{}},
	{"STATUS_V1", "v1", "Status", metav1.Status{}},
	{"LIST_META_V1", "", "", metav1.ListMeta{}},
}

// Types with their own JSON form, decoded by code rather than by the table.
var special = map[reflect.Type]string{
	reflect.TypeOf(metav1.Time{}):          "T",
	reflect.TypeOf(metav1.MicroTime{}):     "U",
	reflect.TypeOf(resource.Quantity{}):    "Q",
	reflect.TypeOf(intstr.IntOrString{}):   "I",
	reflect.TypeOf(runtime.RawExtension{}): "R",
	reflect.TypeOf(metav1.FieldsV1{}):      "F",
	reflect.TypeOf(metav1.Duration{}):      "D",
}

type message struct {
	name   string // TS constant
	goType reflect.Type
	fields []string
	refs   []string
	// typeMeta is "apiVersion kind" for a type that embeds metav1.TypeMeta: nested in another object
	// (a StatefulSet's volumeClaimTemplates), the API server's JSON gives it apiVersion and kind, which
	// protobuf cannot carry; the decoder adds them.
	typeMeta string
}

var (
	rootOf   = map[reflect.Type]root{}
	messages = map[reflect.Type]*message{}
	order    []*message
	names    = map[string]reflect.Type{}
)

func constName(t reflect.Type) string {
	pkg := t.PkgPath()
	parts := strings.Split(pkg, "/")
	version := parts[len(parts)-1]
	group := parts[len(parts)-2]
	if group == "apis" { // k8s.io/apimachinery/pkg/apis/meta/v1
		group = parts[len(parts)-1]
	}
	if strings.HasSuffix(pkg, "apis/meta/v1") {
		group, version = "meta", "v1"
	}
	name := "m_" + t.Name()
	if other, taken := names[name]; taken && other != t {
		name = "m_" + group + version + "_" + t.Name()
	}
	return name
}

// scalar returns the table code of a non-message Go type, or "".
func scalar(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "s"
	case reflect.Bool:
		return "b"
	case reflect.Int32, reflect.Int64, reflect.Int, reflect.Uint32, reflect.Uint64, reflect.Int16, reflect.Uint16, reflect.Uint8:
		return "i"
	case reflect.Float64, reflect.Float32:
		return "d"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "y"
		}
	}
	return ""
}

// valueCode is the code of a (non-repeated) value of type t: a scalar, a special, or m<ref>.
func valueCode(m *message, t reflect.Type) string {
	if c, ok := special[t]; ok {
		return c
	}
	if c := scalar(t); c != "" {
		return c
	}
	if t.Kind() == reflect.Struct {
		return "m" + strconv.Itoa(ref(m, t))
	}
	fail("%s: no protobuf code for Go type %s", m.goType, t)
	return ""
}

func ref(m *message, t reflect.Type) int {
	target := visit(t)
	for i, r := range m.refs {
		if r == target.name {
			return i
		}
	}
	m.refs = append(m.refs, target.name)
	return len(m.refs) - 1
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "protobuf-schema: "+format+"\n", args...)
	os.Exit(1)
}

// visit adds the message of struct type t (and everything it reaches) to the table.
func visit(t reflect.Type) *message {
	if m, ok := messages[t]; ok {
		return m
	}
	m := &message{goType: t}
	m.name = constName(t)
	names[m.name] = t
	messages[t] = m
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("protobuf")
		if f.Anonymous && f.Type == reflect.TypeOf(metav1.TypeMeta{}) {
			if r, isRoot := rootOf[t]; isRoot {
				m.typeMeta = r.apiVersion + " " + r.kind
			} else if t.PkgPath() == "k8s.io/api/core/v1" {
				m.typeMeta = "v1 " + t.Name()
			} else {
				fail("%s embeds TypeMeta outside the core group: teach the generator its apiVersion", t)
			}
		}
		if !ok {
			continue
		}
		parts := strings.Split(tag, ",")
		num, err := strconv.Atoi(parts[1])
		if err != nil {
			fail("%s.%s: bad protobuf tag %q", t, f.Name, tag)
		}
		jsonTag := f.Tag.Get("json")
		jsonParts := strings.Split(jsonTag, ",")
		jsonName := jsonParts[0]
		if jsonName == "-" {
			continue
		}
		flags := ""
		for _, o := range jsonParts[1:] {
			switch o {
			case "omitempty":
				flags += "o"
			case "omitzero":
				flags += "z"
			}
		}
		ft := f.Type
		inline := f.Anonymous && jsonName == ""
		if inline {
			flags += "n"
		}
		if jsonName == "" && !inline {
			jsonName = f.Name
		}
		var code string
		switch {
		case ft.Kind() == reflect.Pointer:
			flags += "p"
			code = valueCode(m, ft.Elem())
		case ft.Kind() == reflect.Map:
			if ft.Key().Kind() != reflect.String {
				fail("%s.%s: map key %s is not a string", t, f.Name, ft.Key())
			}
			vt := ft.Elem()
			if vt.Kind() == reflect.Slice && vt.Elem().Kind() != reflect.Uint8 {
				fail("%s.%s: map of lists is not supported", t, f.Name)
			}
			code = "M" + valueCode(m, vt)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
			flags += "r"
			et := ft.Elem()
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			code = valueCode(m, et)
		default:
			code = valueCode(m, ft)
		}
		m.fields = append(m.fields, fmt.Sprintf("%d%s%s:%s", num, flags, code, jsonName))
	}
	order = append(order, m)
	return m
}

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "kinds" && os.Args[1] != "messages") {
		fail("usage: protobuf-schema kinds|messages")
	}
	for _, r := range roots {
		rootOf[reflect.TypeOf(r.value)] = r
	}
	for _, r := range roots {
		visit(reflect.TypeOf(r.value))
	}
	var out strings.Builder
	out.WriteString(`// Code generated by build/protobuf-schema (npm run gen:protobuf) from the Go types of k8s.io/api and
// k8s.io/apimachinery ` + moduleVersions() + `. DO NOT EDIT.
`)
	if os.Args[1] == "messages" {
		writeMessages(&out)
	} else {
		writeKinds(&out)
	}
	os.Stdout.WriteString(out.String())
}

// writeMessages writes every message, each its own exported constant.
func writeMessages(out *strings.Builder) {
	out.WriteString(`//
// One constant per protobuf message: "<field number><flags><code>:<JSON name>" per field, separated by
// spaces. Flags: r repeated, p pointer (present even when zero), o omitempty, z omitzero, n embedded
// (its fields are promoted into the parent's JSON). Codes: s string, b bool, i integer, d double,
// y bytes (base64 in JSON), m<k> the k-th message of the constant's references, M<code> a map from
// string keys, T Time, U MicroTime, Q Quantity, I IntOrString, R RawExtension, F FieldsV1, D Duration.
// The references are a function so that messages may refer to each other in any order.
import { type MessageSchema, message } from './message-schema.ts'

`)
	for _, m := range order {
		refs := "undefined"
		if len(m.refs) > 0 {
			refs = "() => [" + strings.Join(m.refs, ", ") + "]"
		}
		typeMeta := ""
		if m.typeMeta != "" {
			typeMeta = fmt.Sprintf(", %q", m.typeMeta)
		}
		fmt.Fprintf(out, "export const %s: MessageSchema = /* @__PURE__ */ message(%q, %q, %s%s)\n", m.name, m.goType.Name(), strings.Join(m.fields, " "), refs, typeMeta)
	}
}

// writeKinds writes one exported constant per root: a kind over its top-level message, or a message.
func writeKinds(out *strings.Builder) {
	sorted := append([]root(nil), roots...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].constName < sorted[j].constName })
	var tops []string
	for _, r := range sorted {
		tops = append(tops, messages[reflect.TypeOf(r.value)].name)
	}
	sort.Strings(tops)
	out.WriteString(`//
// One constant per kind (its top-level message is in messages.generated.ts), and ListMeta.
import type { KindSchema } from './kind-schema.ts'
import type { MessageSchema } from './message-schema.ts'
import {
`)
	for _, t := range tops {
		fmt.Fprintf(out, "  %s,\n", t)
	}
	out.WriteString("} from './messages.generated.ts'\nimport { kind } from './protobuf-decoders.ts'\n\n")
	for _, r := range sorted {
		m := messages[reflect.TypeOf(r.value)]
		if r.kind == "" {
			fmt.Fprintf(out, "/** `%s` of `%s`: the metadata of every list. */\nexport const %s: MessageSchema = %s\n", m.goType.Name(), m.goType.PkgPath(), r.constName, m.name)
			continue
		}
		fmt.Fprintf(out, "/** `%s` `%s`. */\nexport const %s: KindSchema = /* @__PURE__ */ kind(%q, %q, %s)\n", r.apiVersion, r.kind, r.constName, r.apiVersion, r.kind, m.name)
	}
}

func moduleVersions() string {
	data, err := os.ReadFile("go.mod")
	if err != nil {
		fail("read go.mod: %v", err)
	}
	var vs []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "k8s.io/api" || f[0] == "k8s.io/apimachinery") {
			vs = append(vs, f[1])
		}
	}
	return strings.Join(vs, "/")
}
