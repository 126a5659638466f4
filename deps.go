//go:build tools

package main

import (
	_ "github.com/urfave/cli/v2"
	_ "golang.org/x/sys/unix"
	_ "google.golang.org/grpc"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/util/validation"
	_ "k8s.io/cri-api/pkg/apis/runtime/v1"
	_ "sigs.k8s.io/yaml"
)
