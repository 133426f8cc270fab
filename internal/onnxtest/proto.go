package onnxtest

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// This file hand-encodes the small subset of onnx.proto that the test models
// need. Field numbers follow onnx/onnx.proto3.

// ONNX TensorProto.DataType values.
const (
	dtFloat = 1
	dtInt64 = 7
)

// ONNX AttributeProto.AttributeType values.
const (
	attrInt = 2
)

// msg is a protobuf message under construction.
type msg []byte

func (m msg) bytes(num protowire.Number, b []byte) msg {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendBytes(m, b)
}

func (m msg) str(num protowire.Number, s string) msg {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendString(m, s)
}

func (m msg) varint(num protowire.Number, v int64) msg {
	m = protowire.AppendTag(m, num, protowire.VarintType)
	return protowire.AppendVarint(m, uint64(v))
}

// packed appends vs as a packed repeated int64 field, omitted when empty.
func (m msg) packed(num protowire.Number, vs []int64) msg {
	if len(vs) == 0 {
		return m
	}
	var p []byte
	for _, v := range vs {
		p = protowire.AppendVarint(p, uint64(v))
	}
	return m.bytes(num, p)
}

// model encodes a ModelProto with the given graph, ir_version 8 and the
// default-domain opset 17.
func model(graph msg) []byte {
	opset := msg(nil).str(1, "").varint(2, 17) // OperatorSetIdProto
	return msg(nil).
		varint(1, 8).                 // ir_version
		str(2, "vault-rag onnxtest"). // producer_name
		bytes(7, graph).              // graph
		bytes(8, opset)               // opset_import
}

// graphProto encodes a GraphProto.
func graphProto(name string, nodes, inits, inputs, outputs []msg) msg {
	g := msg(nil)
	for _, n := range nodes {
		g = g.bytes(1, n)
	}
	g = g.str(2, name)
	for _, t := range inits {
		g = g.bytes(5, t)
	}
	for _, v := range inputs {
		g = g.bytes(11, v)
	}
	for _, v := range outputs {
		g = g.bytes(12, v)
	}
	return g
}

// node encodes a NodeProto; name doubles as the node's only output name.
func node(op, out string, in []string, attrs ...msg) msg {
	n := msg(nil)
	for _, s := range in {
		n = n.str(1, s)
	}
	n = n.str(2, out).str(3, out).str(4, op)
	for _, a := range attrs {
		n = n.bytes(5, a)
	}
	return n
}

// intAttr encodes an INT AttributeProto.
func intAttr(name string, v int64) msg {
	return msg(nil).str(1, name).varint(3, v).varint(20, attrInt)
}

// floatTensor encodes a float32 TensorProto initializer using raw_data.
func floatTensor(name string, dims []int64, data []float32) msg {
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return msg(nil).packed(1, dims).varint(2, dtFloat).str(8, name).bytes(9, raw)
}

// int64Tensor encodes an int64 TensorProto initializer using raw_data.
func int64Tensor(name string, dims []int64, data []int64) msg {
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return msg(nil).packed(1, dims).varint(2, dtInt64).str(8, name).bytes(9, raw)
}

// valueInfo encodes a tensor ValueInfoProto. Each dim is either an int
// (dim_value) or a string (dim_param, a symbolic dimension).
func valueInfo(name string, elemType int64, dims ...any) msg {
	shape := msg(nil)
	for _, d := range dims {
		dim := msg(nil)
		switch d := d.(type) {
		case int:
			dim = dim.varint(1, int64(d))
		case string:
			dim = dim.str(2, d)
		default:
			panic("onnxtest: bad dim type")
		}
		shape = shape.bytes(1, dim)
	}
	tensor := msg(nil).varint(1, elemType).bytes(2, shape) // TypeProto.Tensor
	typ := msg(nil).bytes(1, tensor)                       // TypeProto
	return msg(nil).str(1, name).bytes(2, typ)
}
