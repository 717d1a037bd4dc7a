package websocket

import (
	"bufio"
	"encoding/binary"
	"io"
	"unicode/utf8"
)

// Opcodes of RFC 6455.
const (
	OpContinuation = 0x0
	OpText         = 0x1
	OpBinary       = 0x2
	OpClose        = 0x8
	OpPing         = 0x9
	OpPong         = 0xA
)

// Close codes of RFC 6455 the server sends.
const (
	CloseNormal     = 1000
	CloseProtocol   = 1002
	CloseNoStatus   = 1005 // none was sent; never on the wire
	CloseInvalidUTF = 1007
	CloseTooBig     = 1009
)

// MaxMessage is the most a client may send in one data message; a client of
// a watch has nothing to say, and what it says is thrown away.
const MaxMessage = 1 << 20

// maxControl is the longest payload of a control frame (RFC 6455 5.5).
const maxControl = 125

// header is a frame's header.
type header struct {
	fin    bool
	op     byte
	masked bool
	mask   [4]byte
	length uint64
}

// readHeader reads a frame header and checks what RFC 6455 requires of
// every frame: no extension bits, a known opcode, control frames short and
// unfragmented, the length in its shortest form, and masking when masked
// (from a client) or not (from a server).
func readHeader(r *bufio.Reader, masked bool) (header, error) {
	var h header
	var b [8]byte
	if _, err := io.ReadFull(r, b[:2]); err != nil {
		return h, err
	}
	h.fin, h.op, h.masked = b[0]&0x80 != 0, b[0]&0x0f, b[1]&0x80 != 0
	if b[0]&0x70 != 0 {
		return h, protocolError("reserved bits set without an extension")
	}
	switch h.op {
	case OpContinuation, OpText, OpBinary, OpClose, OpPing, OpPong:
	default:
		return h, protocolError("unknown opcode %#x", h.op)
	}
	if h.masked != masked {
		if masked {
			return h, protocolError("a client's frame must be masked")
		}
		return h, protocolError("a server's frame must not be masked")
	}
	switch n := b[1] & 0x7f; n {
	case 126:
		if _, err := io.ReadFull(r, b[:2]); err != nil {
			return h, io.ErrUnexpectedEOF
		}
		if h.length = uint64(binary.BigEndian.Uint16(b[:2])); h.length < 126 {
			return h, protocolError("length not in its shortest form")
		}
	case 127:
		if _, err := io.ReadFull(r, b[:8]); err != nil {
			return h, io.ErrUnexpectedEOF
		}
		if h.length = binary.BigEndian.Uint64(b[:8]); h.length>>63 != 0 || h.length <= 0xffff {
			return h, protocolError("length not in its shortest form, or over 2^63")
		}
	default:
		h.length = uint64(n)
	}
	if h.op >= OpClose && (!h.fin || h.length > maxControl) {
		return h, protocolError("a control frame must be whole and at most %d bytes", maxControl)
	}
	if h.masked {
		if _, err := io.ReadFull(r, h.mask[:]); err != nil {
			return h, io.ErrUnexpectedEOF
		}
	}
	return h, nil
}

// unmask undoes the client's masking of p, which starts at offset pos of
// the frame's payload.
func unmask(p []byte, mask [4]byte, pos int) {
	for i := range p {
		p[i] ^= mask[(pos+i)&3]
	}
}

// readFrames reads a client's frames until an error: data messages are
// read and discarded, at most limit bytes each (else ErrTooBig); control
// frames go to control with their payload unmasked, a close frame's once
// checked (a *CloseError then ends the reading). It returns io.EOF (or the
// connection's error) when the client goes away.
func readFrames(r *bufio.Reader, limit int64, control func(op byte, payload []byte) error) error {
	var payload [maxControl]byte
	inMessage := false
	var size int64
	for {
		h, err := readHeader(r, true)
		if err != nil {
			return err
		}
		if h.op >= OpClose {
			p := payload[:h.length]
			if _, err := io.ReadFull(r, p); err != nil {
				return io.ErrUnexpectedEOF
			}
			unmask(p, h.mask, 0)
			if h.op == OpClose {
				cerr, err := parseClose(p)
				if err != nil {
					return err
				}
				if err := control(h.op, p); err != nil {
					return err
				}
				return cerr
			}
			if err := control(h.op, p); err != nil {
				return err
			}
			continue
		}
		switch {
		case h.op == OpContinuation && !inMessage:
			return protocolError("a continuation frame without a message")
		case h.op != OpContinuation && inMessage:
			return protocolError("a new message before the last one ended")
		case h.op != OpContinuation:
			size = 0
		}
		if size += int64(h.length); h.length > uint64(limit) || size > limit {
			return ErrTooBig
		}
		if _, err := r.Discard(int(h.length)); err != nil {
			return io.ErrUnexpectedEOF
		}
		inMessage = !h.fin
	}
}

// parseClose reads a close frame's payload: nothing, or a valid code and a
// UTF-8 reason.
func parseClose(p []byte) (*CloseError, error) {
	switch {
	case len(p) == 0:
		return &CloseError{Code: CloseNoStatus}, nil
	case len(p) == 1:
		return nil, protocolError("a close frame of one byte")
	}
	code := int(binary.BigEndian.Uint16(p))
	if !validCloseCode(code) {
		return nil, protocolError("close code %d", code)
	}
	if !utf8.Valid(p[2:]) {
		return nil, protocolError("a close reason not in UTF-8")
	}
	return &CloseError{Code: code, Reason: string(p[2:])}, nil
}

// validCloseCode says a peer may send code in a close frame: RFC 6455's,
// those IANA registered since (1012 service restart, 1013 try again
// later, 1014 bad gateway), and the ranges for libraries and applications.
func validCloseCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014, code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// appendFrame appends one whole frame; a client's (mask non-nil) is
// masked with it.
func appendFrame(dst []byte, op byte, p []byte, mask *[4]byte) []byte {
	start := len(dst)
	dst = appendFrameHeader(dst, op, len(p))
	if mask == nil {
		return append(dst, p...)
	}
	dst[start+1] |= 0x80
	dst = append(dst, mask[:]...)
	body := len(dst)
	dst = append(dst, p...)
	unmask(dst[body:], *mask, 0)
	return dst
}

// appendFrameHeader appends the header of an unmasked whole frame of n
// bytes.
func appendFrameHeader(dst []byte, op byte, n int) []byte {
	dst = append(dst, 0x80|op)
	switch {
	case n < 126:
		return append(dst, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(dst, 126), uint16(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, 127), uint64(n))
}
