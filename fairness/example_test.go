package fairness_test

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/fairness"
)

func ExampleController_Admit() {
	c, err := fairness.New(fairness.Default(600))
	if err != nil {
		panic(err)
	}
	d, done, err := c.Admit(context.Background(), fairness.Request{User: "alice", Groups: []string{"system:authenticated"}})
	if err != nil {
		return // 429
	}
	defer done()
	fmt.Println(d.FlowSchema, d.PriorityLevel, d.Flow)
	// Output: global-default global-default global-default/alice
}
