package builtin_test

import (
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/builtin"
)

func TestEventConversion(t *testing.T) {
	in := builtin.EventsEvent{
		Regarding: builtin.ObjectReference{Kind: "Widget", Name: "w"}, Note: "n", Reason: "R", Type: "Normal", Action: "A",
		ReportingController: "c", ReportingInstance: "i", DeprecatedCount: 3,
		DeprecatedLastTimestamp: kapi.Now(), EventTime: kapi.NowMicro(),
	}
	var core builtin.Event
	if err := builtin.EventToCore(&in, &core); err != nil {
		t.Fatal(err)
	}
	if core.InvolvedObject.Name != "w" || core.Message != "n" || core.Count != 3 || core.ReportingController != "c" || !core.LastTimestamp.Equal(in.DeprecatedLastTimestamp.Time) {
		t.Errorf("EventToCore = %+v", core)
	}
	var back builtin.EventsEvent
	if err := builtin.EventFromCore(&core, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, in)
	}
}
