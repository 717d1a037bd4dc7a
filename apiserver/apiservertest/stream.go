package apiservertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/codec"
)

// Wait bounds every wait of this package's helpers on a server: long,
// because test machines are shared. No helper asserts how long anything
// took.
const Wait = 30 * time.Second

// Stream reads a watch in any format (JSON, protobuf, CBOR), as events
// whose objects are JSON.
type Stream struct {
	// ContentType is the watch's Content-Type.
	ContentType string

	t      testing.TB
	events chan Event
	done   chan struct{}
	err    error // why it ended; valid after done
	cancel context.CancelFunc
}

// Watch sends req, a watch, with hc. It fails the test unless the answer
// is 200 with Content-Type want, and reads the stream by that type until
// Stop, which the test's cleanup calls.
func (d *Decoder) Watch(t testing.TB, hc *http.Client, req *http.Request, want string) *Stream {
	t.Helper()
	ctx, cancel := context.WithCancel(req.Context())
	resp, err := hc.Do(req.WithContext(ctx))
	if err != nil {
		cancel()
		t.Fatalf("watch %s: %v", req.URL.Path, err)
	}
	accept := req.Header.Get("Accept")
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("watch %s (Accept %s): HTTP %d: %.500q", req.URL.Path, accept, resp.StatusCode, data)
	}
	ct := resp.Header.Get("Content-Type")
	if ct != want {
		t.Errorf("watch %s (Accept %s): Content-Type %q, want %q", req.URL.Path, accept, ct, want)
	}
	s := &Stream{ContentType: ct, t: t, events: make(chan Event), done: make(chan struct{}), cancel: cancel}
	mt := BareType(t, ct)
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for {
			ev, err := d.ReadEvent(br, mt)
			if err != nil {
				s.err = err
				return
			}
			select {
			case s.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(s.Stop)
	return s
}

// Stop ends the watch and waits for its reader.
func (s *Stream) Stop() {
	s.cancel()
	<-s.done
}

// Next is the next event; the test fails if none comes within Wait or the
// stream ends.
func (s *Stream) Next() Event {
	s.t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-s.done:
		s.t.Fatalf("the watch ended (%v), want another event", s.err)
	case <-time.After(Wait):
		s.t.Fatalf("no watch event within %v", Wait)
	}
	panic("unreachable")
}

// End waits for the server to end the watch, and returns why the reader
// stopped (io.EOF when the server ended the stream cleanly). The test
// fails if an event comes first or the stream is still open after Wait.
func (s *Stream) End() error {
	s.t.Helper()
	select {
	case ev := <-s.events:
		s.t.Errorf("event %s %s, want the end of the watch", ev.Type, ev.Name())
	case <-s.done:
		return s.err
	case <-time.After(Wait):
		s.t.Errorf("the watch did not end within %v", Wait)
	}
	return nil
}

// NextN reads n events, skipping BOOKMARKs when skipBookmarks.
func (s *Stream) NextN(n int, skipBookmarks bool) []Event {
	s.t.Helper()
	var evs []Event
	for len(evs) < n {
		ev := s.Next()
		if skipBookmarks && ev.Type == "BOOKMARK" {
			continue
		}
		evs = append(evs, ev)
	}
	return evs
}

// ReadEvent reads one event of a watch stream of media type mt (without
// parameters): JSON lines; protobuf frames (a 4-byte big-endian length,
// then WatchEvent {type = 1, object = 2: RawExtension {raw = 1}}, raw an
// enveloped object); or a CBOR sequence. It fails no test, so that it may
// run off the test goroutine.
func (d *Decoder) ReadEvent(br *bufio.Reader, mt string) (ev Event, err error) {
	switch mt {
	case MediaJSON:
		line, err := br.ReadBytes('\n')
		if err != nil {
			return ev, err
		}
		err = json.Unmarshal(line, &ev)
		return ev, err
	case MediaProtobuf:
		var size [4]byte
		if _, err := io.ReadFull(br, size[:]); err != nil {
			return ev, err
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(br, frame); err != nil {
			return ev, err
		}
		err := Collect(func(t testing.TB) {
			for _, f := range ProtoFields(t, frame) {
				switch f.Num {
				case 1:
					ev.Type = string(f.Bytes)
				case 2:
					for _, g := range ProtoFields(t, f.Bytes) {
						if g.Num == 1 {
							ev.Object = d.protoDocJSON(t, g.Bytes)
						}
					}
				}
			}
		})
		return ev, err
	case MediaCBORSeq:
		item, err := ReadCBORItem(br)
		if err != nil {
			return ev, err
		}
		if !bytes.HasPrefix(item, cborSelfDescribed) {
			return ev, fmt.Errorf("a cbor-seq item does not start with tag 55799: % x", item[:min(len(item), 8)])
		}
		doc, _, err := codec.ByMediaType(MediaCBOR).ToJSON(item)
		if err != nil {
			return ev, err
		}
		err = json.Unmarshal(doc, &ev)
		return ev, err
	}
	return ev, fmt.Errorf("no reader for stream type %q", mt)
}
