package watch_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// Widget is what the example's cache serves: the stored value with its
// resourceVersion.
type Widget struct {
	Size            string
	ResourceVersion string
}

func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends Run, and the watch with it
	store := memory.New()
	defer store.Close()
	store.Create(ctx, "/registry/widgets/default/a", []byte("small"))

	hub := watch.New(store, "/registry/")
	widgets := hub.Register("/registry/widgets/", func(kv storage.KeyValue) (any, error) {
		return Widget{Size: string(kv.Value), ResourceVersion: strconv.FormatInt(kv.ModRevision, 10)}, nil
	})
	go hub.Run(ctx)

	// A consistent read waits until the cache has caught up with the store.
	rev, _ := store.Revision(ctx)
	if err := hub.WaitFor(ctx, rev); err != nil {
		fmt.Println(err)
		return
	}
	items, listRev, _ := widgets.List("/registry/widgets/default/", "", 0, nil)
	fmt.Printf("list: %d item(s)\n", len(items))

	// A streaming list: the current objects, a bookmark, then the changes.
	w, err := widgets.Watch(watch.WatchOptions{Prefix: "default/", InitialEvents: true, InitialEventsEnd: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	store.Create(ctx, "/registry/widgets/default/b", []byte("large"))
	store.Delete(ctx, "/registry/widgets/default/a", 0)
	for range 4 {
		ev, err := w.Next(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Type == watch.Bookmark {
			fmt.Printf("%s at the list's revision: %t, initial events end: %t\n", ev.Type, ev.Revision == listRev, ev.InitialEventsEnd)
			continue
		}
		obj, err := ev.Item.Object()
		if err != nil {
			fmt.Println(err)
			return
		}
		w := obj.(Widget)
		fmt.Printf("%s %s %s\n", ev.Type, ev.Item.Key, w.Size)
	}
	// Output:
	// list: 1 item(s)
	// ADDED /registry/widgets/default/a small
	// BOOKMARK at the list's revision: true, initial events end: true
	// ADDED /registry/widgets/default/b large
	// DELETED /registry/widgets/default/a small
}

func ExampleCache_List() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := memory.New()
	defer store.Close()
	var rev int64
	for _, name := range []string{"a", "b", "c", "d"} {
		rev, _ = store.Create(ctx, "/registry/widgets/default/"+name, []byte(name))
	}
	hub := watch.New(store, "/registry/")
	widgets := hub.Register("/registry/widgets/", func(kv storage.KeyValue) (any, error) {
		return string(kv.Value), nil
	})
	go hub.Run(ctx)
	hub.WaitFor(ctx, rev)

	// Page through the namespace two items at a time, starting each page
	// after the last key of the previous one.
	start := ""
	for {
		items, _, remaining := widgets.List("/registry/widgets/default/", start, 2, nil)
		for _, it := range items {
			obj, _ := it.Object()
			fmt.Print(obj, " ")
		}
		fmt.Printf("(%d remaining)\n", remaining)
		if remaining == 0 {
			break
		}
		start = items[len(items)-1].Key + "\x00"
	}
	// Output:
	// a b (2 remaining)
	// c d (0 remaining)
}

func ExampleItem_Encoded() {
	item := watch.NewItem("/registry/widgets/default/a", 7, Widget{Size: "small", ResourceVersion: "7"})
	encode := func() ([]byte, error) {
		fmt.Println("encoding")
		obj, err := item.Object()
		if err != nil {
			return nil, err
		}
		w := obj.(Widget)
		return fmt.Appendf(nil, `{"size":%q}`, w.Size), nil
	}
	for range 2 {
		data, _ := item.Encoded("application/json", encode)
		fmt.Println(string(data))
	}
	// Output:
	// encoding
	// {"size":"small"}
	// {"size":"small"}
}
