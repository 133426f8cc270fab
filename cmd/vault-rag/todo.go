package main

import (
	"context"
	"errors"
)

func cmdServe(ctx context.Context, args []string) error { return errors.New("not yet") }
func cmdGen(ctx context.Context, args []string) error   { return errors.New("not yet") }
