// Command k8s-manifests checks, without a cluster, the Kubernetes
// manifests a Markdown page shows (every ```yaml block; documents
// separated by ---): docs/distributed.md's are what a user applies, and
// no API server sees them before the user does. Each document is decoded
// strictly into the Kubernetes API's Go types (an unknown field or a
// wrong type fails), and a Job's podFailurePolicy is held to the API
// server's rules for it (k8s.io/kubernetes pkg/apis/batch/validation):
// the actions and operators, ascending unique exit codes, no 0 with In,
// a containerName that names a container, restartPolicy Never,
// backoffLimitPerIndex only with completionMode Indexed. It is a module
// of its own so that bkcheck does not depend on k8s.io/api.
//
//	cd scripts/k8s-manifests && go run . ../../docs/distributed.md
package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: k8s-manifests PAGE.md")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err.Error())
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	n := 0
	for _, blk := range blocks {
		for _, doc := range strings.Split(blk[1], "\n---\n") {
			var meta struct{ Kind string }
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				fail(err.Error())
			}
			var v any
			switch meta.Kind {
			case "Job":
				v = &batchv1.Job{}
			case "PersistentVolumeClaim":
				v = &corev1.PersistentVolumeClaim{}
			default:
				fail("unknown kind " + meta.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
				fail(meta.Kind + ": " + err.Error())
			}
			if j, ok := v.(*batchv1.Job); ok {
				p := j.Spec.PodFailurePolicy
				// The API server's rules for podFailurePolicy (k8s.io/kubernetes
				// pkg/apis/batch/validation), as far as they concern these fields.
				names := map[string]bool{}
				for _, c := range j.Spec.Template.Spec.Containers {
					names[c.Name] = true
				}
				if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
					fail("podFailurePolicy needs restartPolicy Never")
				}
				for i, r := range p.Rules {
					switch r.Action {
					case batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyActionCount:
					default:
						fail(fmt.Sprintf("rule %d: action %q", i, r.Action))
					}
					if (r.OnExitCodes == nil) == (len(r.OnPodConditions) == 0) {
						fail(fmt.Sprintf("rule %d: exactly one of onExitCodes and onPodConditions", i))
					}
					if e := r.OnExitCodes; e != nil {
						if e.Operator != batchv1.PodFailurePolicyOnExitCodesOpIn && e.Operator != batchv1.PodFailurePolicyOnExitCodesOpNotIn {
							fail(fmt.Sprintf("rule %d: operator %q", i, e.Operator))
						}
						if e.ContainerName != nil && !names[*e.ContainerName] {
							fail(fmt.Sprintf("rule %d: no container %q", i, *e.ContainerName))
						}
						if len(e.Values) == 0 || len(e.Values) > 255 {
							fail(fmt.Sprintf("rule %d: %d values", i, len(e.Values)))
						}
						for k, v := range e.Values {
							if k > 0 && v <= e.Values[k-1] {
								fail(fmt.Sprintf("rule %d: values must be ascending and unique", i))
							}
							if v == 0 && e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn {
								fail(fmt.Sprintf("rule %d: In with 0", i))
							}
						}
					}
					for _, c := range r.OnPodConditions {
						if c.Type == "" {
							fail(fmt.Sprintf("rule %d: a pod condition without type", i))
						}
					}
				}
				if j.Spec.BackoffLimitPerIndex != nil && (j.Spec.CompletionMode == nil || *j.Spec.CompletionMode != batchv1.IndexedCompletion) {
					fail("backoffLimitPerIndex needs completionMode Indexed")
				}
				fmt.Printf("Job %s: %d podFailurePolicy rules, restartPolicy %s, backoffLimitPerIndex %d\n", j.Name, len(p.Rules), j.Spec.Template.Spec.RestartPolicy, *j.Spec.BackoffLimitPerIndex)
			}
			n++
			fmt.Println("ok", meta.Kind)
		}
	}
	if n == 0 {
		fail("no manifest in " + os.Args[1])
	}
	fmt.Println(n, "manifests decoded strictly; podFailurePolicy within the API server's rules")
}

// fail reports the first problem found and exits 1.
func fail(msg string) {
	fmt.Fprintln(os.Stderr, "k8s-manifests:", msg)
	os.Exit(1)
}
