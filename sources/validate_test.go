package sources

import (
	"strings"
	"testing"
)

func TestValidation(t *testing.T) {
	// Each case is a pod spec (YAML, indented under "spec:") for the pod
	// "web" and the complete error it must give; "" means valid.
	tests := []struct {
		name string
		spec string
		want []string
	}{
		{
			name: "valid sidecar with probes and lifecycle",
			spec: `
  initContainers:
  - name: side
    image: busybox
    restartPolicy: Always
    readinessProbe: {tcpSocket: {port: 80}}
    startupProbe: {grpc: {port: 9000}}
    lifecycle: {preStop: {sleep: {seconds: 1}}}
  containers:
  - {name: app, image: nginx}`,
		},
		{
			name: "tolerations as the API server with its default gates checks them",
			spec: `
  tolerations:
  - {operator: Exists}
  - {key: a.example/b, operator: Equal, value: c, effect: NoExecute, tolerationSeconds: 30}
  - {key: k, operator: Gt, value: "900", effect: NoSchedule}
  - {key: "", operator: Equal, value: v}
  - {key: k, operator: Exists, value: v, effect: Sometimes}
  - {key: k, value: v, effect: NoSchedule, tolerationSeconds: 5}
  containers:
  - {name: app, image: nginx}`,
			want: []string{
				`spec.tolerations[2].operator: Unsupported value: "Gt": supported values: "Equal", "Exists"`,
				`spec.tolerations[3].operator: Invalid value: "Equal": operator must be Exists when ` + "`key`" + ` is empty`,
				`spec.tolerations[4].operator: Invalid value: "v": value must be empty when ` + "`operator`" + ` is 'Exists'`,
				`spec.tolerations[4].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
				`spec.tolerations[5].effect: Invalid value: "NoSchedule": effect must be 'NoExecute' when ` + "`tolerationSeconds`" + ` is set`,
			},
		},
		{
			name: "resource names as the API server checks them",
			spec: `
  resources:
    limits: {cpu: "1", pids: "10", ephemeral-storage: 1Gi}
  containers:
  - name: app
    image: nginx
    resources:
      requests: {cpu: 100m, hugepages-2Mi: 2Mi, example.com/dongle: "1", nvidia.com/gpu: "1", pids: "1", pods: "1"}
      limits: {kubernetes.io/native: "1", requests.example.com/x: "1"}`,
			// The limit without a request is a request too (the API's default).
			// The extended resources and hugepages requested without a limit
			// are one line, as the API server shows it (once).
			want: []string{
				`spec.containers[0].resources.limits[requests.example.com/x]: Invalid value: "requests.example.com/x": doesn't follow extended resource name standard`,
				`spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources`,
				`spec.containers[0].resources.requests[pids]: Invalid value: "pids": must be a standard resource type or fully qualified`,
				`spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for containers`,
				`spec.containers[0].resources.requests[requests.example.com/x]: Invalid value: "requests.example.com/x": doesn't follow extended resource name standard`,
				`spec.resources.limits[ephemeral-storage]: Unsupported value: "ephemeral-storage": supported values: "cpu", "hugepages-", "memory"`,
				`spec.resources.limits[pids]: Invalid value: "pids": must be a standard resource type or fully qualified`,
			},
		},
		{
			name: "negative quantities, in every container and the overhead",
			spec: `
  overhead: {cpu: "-1"}
  initContainers:
  - {name: init, image: busybox, resources: {limits: {memory: -100Mi}}}
  - {name: side, image: busybox, restartPolicy: Always, resources: {requests: {ephemeral-storage: -1Gi}}}
  containers:
  - {name: app, image: nginx, resources: {limits: {cpu: "-1", memory: 1Gi}}}`,
			// A limit without a request is its request too (the API's default).
			want: []string{
				`spec.initContainers[0].resources.limits[memory]: Invalid value: "-100Mi": must be greater than or equal to 0`,
				`spec.initContainers[0].resources.requests[memory]: Invalid value: "-100Mi": must be greater than or equal to 0`,
				`spec.initContainers[1].resources.requests[ephemeral-storage]: Invalid value: "-1Gi": must be greater than or equal to 0`,
				`spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
				`spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
				`spec.overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
			},
		},
		{
			name: "quantities beyond the kubelet's int64",
			spec: `
  containers:
  - name: app
    image: nginx
    resources:
      limits: {memory: 1e400, ephemeral-storage: "18446744073709551616", example.com/dongle: 1e19}
      requests: {cpu: "9223372036854776"}
  - name: max
    image: nginx
    resources:
      limits: {cpu: 9223372036854775807m, memory: "9223372036854775807", example.com/dongle: "9223372036854775807"}`,
			// Values as the API server shows them: canonical (1e19 is 10E).
			want: []string{
				`spec.containers[0].resources.limits[ephemeral-storage]: Invalid value: "18446744073709551616": must be less than or equal to 9223372036854775807 (an int64)`,
				`spec.containers[0].resources.limits[example.com/dongle]: Invalid value: "10E": must be less than or equal to 9223372036854775807 (an int64)`,
				`spec.containers[0].resources.limits[memory]: Invalid value: "10e399": must be less than or equal to 9223372036854775807 (an int64)`,
				`spec.containers[0].resources.requests[cpu]: Invalid value: "9223372036854776": must be less than or equal to 9223372036854775807m (an int64 of millicores)`,
				`spec.containers[0].resources.requests[ephemeral-storage]: Invalid value: "18446744073709551616": must be less than or equal to 9223372036854775807 (an int64)`,
				`spec.containers[0].resources.requests[example.com/dongle]: Invalid value: "10E": must be less than or equal to 9223372036854775807 (an int64)`,
				`spec.containers[0].resources.requests[memory]: Invalid value: "10e399": must be less than or equal to 9223372036854775807 (an int64)`,
			},
		},
		{
			name: "requests and limits",
			spec: `
  initContainers:
  - {name: side, image: busybox, restartPolicy: Always, resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}}
  containers:
  - name: app
    image: nginx
    resources:
      requests: {cpu: "2", memory: 1Gi, example.com/a: "1", example.com/b: "1"}
      limits: {cpu: "1", memory: 1Gi, example.com/a: "2", example.com/c: 1500m}`,
			want: []string{
				`spec.initContainers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`,
				`spec.containers[0].resources.limits[example.com/c]: Invalid value: "1500m": must be an integer`,
				`spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
				`spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/a limit of 2`,
				`spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources`,
				`spec.containers[0].resources.requests[example.com/c]: Invalid value: "1500m": must be an integer`,
			},
		},
		{
			name: "hugepages",
			spec: `
  containers:
  - {name: app, image: nginx, resources: {limits: {hugepages-2Mi: 3Mi}}}
  - {name: ok, image: nginx, resources: {limits: {hugepages-2Mi: 4Mi, memory: 1Gi}}}
  - {name: bad, image: nginx, resources: {limits: {hugepages-x: 4Mi, cpu: "1"}}}`,
			want: []string{
				`spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi`,
				`spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi`,
				`spec.containers[0].resources: Forbidden: HugePages require cpu or memory`,
				`spec.containers[2].resources.limits[hugepages-x]: Invalid value: "4Mi": 4Mi is not positive integer multiple of hugepages-x`,
				`spec.containers[2].resources.requests[hugepages-x]: Invalid value: "4Mi": 4Mi is not positive integer multiple of hugepages-x`,
			},
		},
		{
			name: "pod-level resources and the containers'",
			spec: `
  resources:
    requests: {cpu: "1", memory: -1Mi}
    limits: {cpu: "2", hugepages-2Mi: 2Mi}
  initContainers:
  - {name: init, image: busybox, resources: {requests: {cpu: "3"}}}
  containers:
  - {name: a, image: nginx, resources: {requests: {cpu: 500m}, limits: {cpu: "3", memory: 1Gi}}}
  - {name: b, image: nginx, resources: {requests: {cpu: 800m}, limits: {hugepages-2Mi: 4Mi}}}`,
			// The last path is the API server's own.
			want: []string{
				`spec.resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to 0`,
				`spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate container requests of 3`,
				`spec.resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to aggregate container requests of 1Gi`,
				`spec.resources.limits[hugepages-2Mi]: Invalid value: "2Mi": must be greater than or equal to aggregate container limits of 4Mi`,
				`spec.resources.containers[0][cpu].limits: Invalid value: "3": must be less than or equal to pod limits of 2`,
				`spec.resources.containers[1][hugepages-2Mi].limits: Invalid value: "4Mi": must be less than or equal to pod limits of 2Mi`,
			},
		},
		{
			name: "user and group IDs",
			spec: `
  securityContext: {runAsUser: -1, runAsGroup: 4294967296, fsGroup: -5, supplementalGroups: [1, 2147483648]}
  initContainers:
  - {name: init, image: busybox, securityContext: {runAsUser: 2147483648}}
  containers:
  - {name: app, image: nginx, securityContext: {runAsUser: 2147483647, runAsGroup: -1}}`,
			want: []string{
				`spec.initContainers[0].securityContext.runAsUser: Invalid value: 2147483648: must be between 0 and 2147483647, inclusive`,
				`spec.containers[0].securityContext.runAsGroup: Invalid value: -1: must be between 0 and 2147483647, inclusive`,
				`spec.securityContext.fsGroup: Invalid value: -5: must be between 0 and 2147483647, inclusive`,
				`spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive`,
				`spec.securityContext.runAsGroup: Invalid value: 4294967296: must be between 0 and 2147483647, inclusive`,
				`spec.securityContext.supplementalGroups[1]: Invalid value: 2147483648: must be between 0 and 2147483647, inclusive`,
			},
		},
		{
			name: "grace periods of probes and sleep hooks",
			spec: `
  terminationGracePeriodSeconds: 30
  containers:
  - name: app
    image: nginx
    livenessProbe: {exec: {command: ["true"]}, terminationGracePeriodSeconds: 0}
    readinessProbe: {exec: {command: ["true"]}, terminationGracePeriodSeconds: 5}
    startupProbe: {exec: {command: ["true"]}, terminationGracePeriodSeconds: 9223372036854775807}
    lifecycle: {postStart: {sleep: {seconds: -1}}, preStop: {sleep: {seconds: 31}}}
  - name: max
    image: nginx
    lifecycle: {preStop: {sleep: {seconds: 30}}}`,
			want: []string{
				`spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0`,
				`spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes`,
				`spec.containers[0].lifecycle.postStart.sleep: Invalid value: -1: must be non-negative and less than terminationGracePeriodSeconds (30)`,
				`spec.containers[0].lifecycle.preStop.sleep: Invalid value: 31: must be non-negative and less than terminationGracePeriodSeconds (30)`,
			},
		},
		{
			name: "downward API resources and emptyDir sizes",
			spec: `
  volumes:
  - {name: small, emptyDir: {sizeLimit: -1Gi}}
  - {name: huge, emptyDir: {sizeLimit: 1e400}}
  - name: info
    downwardAPI:
      items:
      - {path: mem, resourceFieldRef: {resource: limits.memory}}
      - {path: both, fieldRef: {fieldPath: metadata.name}, resourceFieldRef: {containerName: app, resource: limits.cpu}}
      - {path: none}
      - {path: huge, resourceFieldRef: {containerName: app, resource: limits.hugepages-2Mi, divisor: 1Mi}}
  containers:
  - name: app
    image: nginx
    env:
    - {name: A, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1e400}}}
    - {name: B, valueFrom: {resourceFieldRef: {resource: requests.cpu, divisor: "3"}}}
    - {name: C, valueFrom: {resourceFieldRef: {resource: limits.pids}}}
    - {name: D, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1000m}}}
    - {name: E, valueFrom: {resourceFieldRef: {resource: requests.ephemeral-storage, divisor: 1Mi}}}`,
			want: []string{
				`spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity`,
				`spec.volumes[1].emptyDir.sizeLimit: Invalid value: "10e399": must be less than or equal to 9223372036854775807 (an int64)`,
				`spec.volumes[2].downwardAPI.items[0].resourceFieldRef.containerName: Required value`,
				`spec.volumes[2].downwardAPI.items[1]: Invalid value: "resource": fieldRef and resourceFieldRef can not be specified simultaneously`,
				`spec.volumes[2].downwardAPI.items[2]: Required value: one of fieldRef and resourceFieldRef is required`,
				`spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: Invalid value: "limits.memory": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource`,
				`spec.containers[0].env[1].valueFrom.resourceFieldRef.divisor: Invalid value: "requests.cpu": only divisor's values 1m and 1 are supported with the cpu resource`,
				`spec.containers[0].env[2].valueFrom.resourceFieldRef.resource: Unsupported value: "limits.pids": supported values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"`,
			},
		},
		{
			name: "no containers",
			spec: `
  containers: []`,
			want: []string{`spec.containers: Required value`},
		},
		{
			name: "duplicate container names across init and regular",
			spec: `
  initContainers: [{name: app, image: busybox}]
  containers:
  - {name: main, image: nginx}
  - {name: app, image: nginx}`,
			want: []string{`spec.containers[1].name: Duplicate value: "app"`},
		},
		{
			name: "bad container name and missing image",
			spec: `
  containers: [{name: App_1, image: ""}]`,
			want: []string{
				`spec.containers[0].name: Invalid value: "App_1": a lowercase RFC 1123 label must consist of`,
				`spec.containers[0].image: Required value`,
			},
		},
		{
			name: "ports",
			spec: `
  containers:
  - name: app
    image: nginx
    ports:
    - {name: http, containerPort: 70000}
    - {name: http, containerPort: 81, hostPort: -1, protocol: ICMP}
    - {name: Bad_Name, containerPort: 0}`,
			want: []string{
				`spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`,
				`spec.containers[0].ports[1].name: Duplicate value: "http"`,
				`spec.containers[0].ports[1].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive`,
				`spec.containers[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"`,
				`spec.containers[0].ports[2].name: Invalid value: "Bad_Name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
				`spec.containers[0].ports[2].containerPort: Required value`,
			},
		},
		{
			name: "volumes and mounts",
			spec: `
  volumes:
  - {name: data, emptyDir: {}}
  - {name: data, emptyDir: {}}
  - {name: two, emptyDir: {}, hostPath: {path: /tmp}}
  containers:
  - name: app
    image: nginx
    volumeMounts:
    - {name: data, mountPath: /data}
    - {name: data, mountPath: /data/}
    - {name: nope, mountPath: relative}
    - {name: data, mountPath: /x, subPath: ../etc}
    - {name: data, mountPath: /y, subPath: /abs}`,
			want: []string{
				`spec.volumes[1].name: Duplicate value: "data"`,
				`spec.volumes[2]: Forbidden: may not specify more than 1 volume type`,
				`spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/data/": must be unique`,
				`spec.containers[0].volumeMounts[2].name: Not found: "nope"`,
				`spec.containers[0].volumeMounts[2].mountPath: Invalid value: "relative": must be an absolute path`,
				`spec.containers[0].volumeMounts[3].subPath: Invalid value: "../etc": must not contain '..'`,
				`spec.containers[0].volumeMounts[4].subPath: Invalid value: "/abs": must be a relative path`,
			},
		},
		{
			name: "policies",
			spec: `
  restartPolicy: Sometimes
  dnsPolicy: None
  terminationGracePeriodSeconds: -1
  initContainers:
  - {name: init, image: busybox, restartPolicy: Sometimes}
  - name: watcher
    image: busybox
    restartPolicy: Always
    restartPolicyRules: [{action: RestartAllContainers, exitCodes: {operator: In, values: [88]}}]
  - {name: once, image: busybox, restartPolicy: Never}
  containers:
  - {name: app, image: nginx, imagePullPolicy: Sometimes, restartPolicy: Always}
  - name: rules
    image: busybox
    restartPolicyRules:
    - {action: Restart}
    - {action: Retry, exitCodes: {operator: Equals, values: [1]}}
    - {action: Restart, exitCodes: {operator: NotIn, values: [0]}}
  - {name: own, image: busybox, restartPolicy: OnFailure, restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [42]}}]}`,
			want: []string{
				`spec.initContainers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"`,
				`spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "IfNotPresent"`,
				`spec.containers[1].restartPolicy: Required value: must specify restartPolicy when restart rules are used`,
				`spec.containers[1].restartPolicyRules[0].exitCodes: Required value: must be specified`,
				`spec.containers[1].restartPolicyRules[1].action: Unsupported value: "Retry": supported values: "Restart", "RestartAllContainers"`,
				`spec.containers[1].restartPolicyRules[1].exitCodes.operator: Unsupported value: "Equals": supported values: "In", "NotIn"`,
				`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`,
				`spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when dnsPolicy is None`,
				`spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0`,
			},
		},
		{
			name: "probes",
			spec: `
  initContainers:
  - {name: init, image: busybox, livenessProbe: {exec: {command: ["true"]}}, lifecycle: {postStart: {exec: {command: ["true"]}}}}
  containers:
  - name: app
    image: nginx
    livenessProbe: {exec: {command: ["true"]}, httpGet: {port: 80}, successThreshold: 2}
    readinessProbe: {periodSeconds: 3}
    startupProbe: {httpGet: {port: http-web-svc-too-long}}
    lifecycle: {preStop: {}}`,
			want: []string{
				`spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always`,
				`spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always`,
				`spec.containers[0].livenessProbe: Forbidden: may not specify more than 1 handler type`,
				`spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1`,
				`spec.containers[0].readinessProbe: Required value: must specify a handler type`,
				`spec.containers[0].startupProbe.httpGet.port: Invalid value: "http-web-svc-too-long": must be no more than 15 characters`,
				`spec.containers[0].lifecycle.preStop: Required value: must specify a handler type`,
			},
		},
		{
			name: "env",
			spec: `
  containers:
  - name: app
    image: nginx
    env:
    - {name: ""}
    - {name: "A=B"}
    - {name: C, valueFrom: {}}
    - {name: D, value: x, valueFrom: {fieldRef: {fieldPath: spec.nodeName}, secretKeyRef: {name: s, key: k}}}
    - {name: E, valueFrom: {fieldRef: {fieldPath: spec.hostname}}}
    - {name: F, valueFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}}`,
			want: []string{
				`spec.containers[0].env[0].name: Required value`,
				`spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`,
				"spec.containers[0].env[2].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`",
				`spec.containers[0].env[3].valueFrom: Invalid value: "": may not have more than one field specified at a time`,
				"spec.containers[0].env[3].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty",
				`spec.containers[0].env[4].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.hostname": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`,
			},
		},
		{
			name: "activeDeadlineSeconds in the API server's range, 1 to MaxInt32",
			spec: `
  activeDeadlineSeconds: 2147483647
  containers: [{name: app, image: nginx}]`,
		},
		{
			name: "activeDeadlineSeconds of 0",
			spec: `
  activeDeadlineSeconds: 0
  containers: [{name: app, image: nginx}]`,
			want: []string{`spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive`},
		},
		{
			name: "activeDeadlineSeconds beyond MaxInt32",
			spec: `
  activeDeadlineSeconds: 2147483648
  containers: [{name: app, image: nginx}]`,
			want: []string{`spec.activeDeadlineSeconds: Invalid value: 2147483648: must be between 1 and 2147483647, inclusive`},
		},
		{
			name: "ephemeral containers",
			spec: `
  containers: [{name: app, image: nginx}]
  ephemeralContainers: [{name: debug, image: busybox}]`,
			want: []string{`spec.ephemeralContainers: Forbidden: cannot be set on create`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:" + tt.spec + "\n"
			_, err := Decode("pod.yaml", []byte(data), Options{})
			var want []string
			for _, w := range tt.want {
				want = append(want, `pod.yaml: document 1 (Pod "web"): `+w)
			}
			switch {
			case err == nil && len(want) > 0:
				t.Errorf("no error, want:\n%s", strings.Join(want, "\n"))
			case err != nil && !linesMatch(err.Error(), want, true):
				t.Errorf("error:\n%s\nwant:\n%s", err, strings.Join(want, "\n"))
			}
		})
	}
}

func TestValidateMetadataAndData(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string
		prefix     bool // want holds line prefixes: apimachinery's messages vary
	}{
		{
			name: "pod without name",
			data: "apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\nspec: {containers: [{name: a, image: x}]}\n",
			want: []string{`p.yaml: document 1: metadata.name: Required value: podrun does not generate names`},
		},
		{
			name: "bad name, namespace, label and annotation",
			data: "apiVersion: v1\nkind: Pod\nmetadata: {name: Web, namespace: a.b, labels: {'a/b/c': x}, annotations: {'-x': v}}\nspec: {containers: [{name: a, image: x}]}\n",
			want: []string{
				`p.yaml: document 1 (Pod "Web"): metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of`,
				`p.yaml: document 1 (Pod "Web"): metadata.namespace: Invalid value: "a.b": `,
				`p.yaml: document 1 (Pod "Web"): metadata.labels: Invalid value: "a/b/c": `,
				`p.yaml: document 1 (Pod "Web"): metadata.annotations: Invalid value: "-x": `,
			},
			prefix: true,
		},
		{
			name: "configmap keys",
			data: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: x, 'b/c': z}\nbinaryData: {a: eA==}\n",
			want: []string{
				`p.yaml: document 1 (ConfigMap "c"): data[b/c]: Invalid value: "b/c": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
				`p.yaml: document 1 (ConfigMap "c"): binaryData[a]: Invalid value: "a": duplicate of key present in data`,
			},
		},
		{
			name: "secret keys and type",
			data: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: kubernetes.io/dockerconfigjson\nstringData: {'a b': x}\n",
			want: []string{
				`p.yaml: document 1 (Secret "s"): data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
				`p.yaml: document 1 (Secret "s"): data[.dockerconfigjson]: Required value`,
			},
		},
		{
			name: "duplicate objects name both origins",
			data: podYAML + "---\n" + podYAML + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
			want: []string{`p.yaml: document 2 (Pod "web"): metadata.name: Duplicate value: "web": Pod default/web is also defined in p.yaml: document 1`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("p.yaml", []byte(tt.data), Options{})
			if err == nil {
				t.Fatal("no error")
			}
			if !linesMatch(err.Error(), tt.want, tt.prefix) {
				t.Errorf("error:\n%s\nwant:\n%s", err, strings.Join(tt.want, "\n"))
			}
		})
	}
}

// linesMatch reports whether got has one line per want, each equal to it
// or, with prefix, starting with it.
func linesMatch(got string, want []string, prefix bool) bool {
	lines := strings.Split(got, "\n")
	if len(lines) != len(want) {
		return false
	}
	for i, l := range lines {
		if l != want[i] && !(prefix && strings.HasPrefix(l, want[i])) {
			return false
		}
	}
	return true
}

// TestMapValidationErrorsHaveOneOrder: the validators of labels,
// annotations, a RuntimeClass's nodeSelector and a selector's matchLabels
// range over maps, whose order Go randomises; the errors they give come
// out in one order (path, bad value, detail), so that a manifest gives
// the same message on every run (FuzzDecode found two labels' errors in
// either order).
func TestMapValidationErrorsHaveOneOrder(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string // the bad values, in the order the errors give them
	}{
		{
			name: "labels and annotations",
			data: "apiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {'e e': x, 'b b': x, 'd d': x, 'a a': x, 'c c': x}, annotations: {'-z': v, '-x': v, '-y': v}}\nspec: {containers: [{name: a, image: x}]}\n",
			want: []string{`"a a"`, `"b b"`, `"c c"`, `"d d"`, `"e e"`, `"-x"`, `"-y"`, `"-z"`},
		},
		{
			name: "runtime class node selector",
			data: "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: vm}\nhandler: kata\nscheduling: {nodeSelector: {'k k': x, 'i i': x, 'j j': x, 'h h': x}}\n",
			want: []string{`"h h"`, `"i i"`, `"j j"`, `"k k"`},
		},
		{
			name: "selector match labels",
			data: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {'q q': x, 'o o': x, 'p p': x, 'n n': x}}\n  template:\n    metadata: {labels: {app: a}}\n    spec: {containers: [{name: a, image: x}]}\n",
			want: []string{`"n n"`, `"o o"`, `"p p"`, `"q q"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first string
			for i := range 20 {
				_, err := Decode("p.yaml", []byte(tt.data), Options{})
				if err == nil {
					t.Fatal("no error")
				}
				if i == 0 {
					first = err.Error()
					continue
				}
				if err.Error() != first {
					t.Fatalf("decode %d:\n%s\ndecode 1:\n%s", i+1, err, first)
				}
			}
			at := 0
			for _, v := range tt.want {
				i := strings.Index(first[at:], "Invalid value: "+v)
				if i < 0 {
					t.Fatalf("no error for %s after offset %d, or out of order:\n%s", v, at, first)
				}
				at += i + 1
			}
		})
	}
}
