package main

import (
	"context"
	"errors"
)

func cmdGen(ctx context.Context, args []string) error { return errors.New("not yet") }
