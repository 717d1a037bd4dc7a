package cel

import (
	"math"

	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// estimator is kube-apiserver's cost model for a node's rules: the sizes
// of values come from the schema (maxLength, maxItems, maxProperties, or
// what fits in a request), and the functions this package adds cost what
// Kubernetes' cost for them, at compile time (EstimateCallCost) and at run
// time (CallCost).
type estimator struct {
	root *declType
}

var (
	_ checker.CostEstimator = (*estimator)(nil)
)

func (e *estimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	path := n.Path()
	if len(path) == 0 {
		return nil
	}
	at := e.root
	for _, name := range path[1:] {
		switch name {
		case "@items", "@values":
			at = at.elem
		case "@keys":
			at = at.key
		default:
			at = at.fields[name]
		}
		if at == nil {
			return nil
		}
	}
	return &checker.SizeEstimate{Min: 0, Max: uint64(at.maxElements)}
}

func (e *estimator) size(n checker.AstNode) checker.SizeEstimate {
	if sz := n.ComputedSize(); sz != nil {
		return *sz
	}
	if sz := e.EstimateSize(n); sz != nil {
		return *sz
	}
	return checker.SizeEstimate{Min: 0, Max: math.MaxUint64}
}

// itemsNode is the items of a list node, for sizing them.
type itemsNode struct {
	checker.AstNode
	path []string
	t    *types.Type
}

func (i *itemsNode) Path() []string                      { return i.path }
func (i *itemsNode) Type() *types.Type                   { return i.t }
func (i *itemsNode) ComputedSize() *checker.SizeEstimate { return nil }

func (e *estimator) elemNode(list checker.AstNode) checker.AstNode {
	params := list.Type().Parameters()
	if len(params) == 0 {
		return nil
	}
	var path []string
	if p := list.Path(); p != nil {
		path = append(append(path, p...), "@items")
	}
	return &itemsNode{AstNode: list, path: path, t: params[0]}
}

func (e *estimator) EstimateCallCost(function, overload string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	traverse := func(sz checker.SizeEstimate, f float64) *checker.CallEstimate {
		return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(f)}
	}
	switch function {
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf":
		if target == nil {
			return nil
		}
		elCost := checker.CostEstimate{Min: 1, Max: 1}
		if el := e.elemNode(*target); el != nil {
			if k := el.Type().Kind(); k == types.StringKind || k == types.BytesKind {
				elCost = elCost.Add(e.size(el).MultiplyByCostFactor(common.StringTraversalCostFactor))
			}
			return &checker.CallEstimate{CostEstimate: e.size(*target).MultiplyByCost(elCost)}
		}
		return traverse(e.size(*target), common.StringTraversalCostFactor)
	case "lowerAscii", "upperAscii", "substring", "trim":
		if target != nil {
			sz := e.size(*target)
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(common.StringTraversalCostFactor), ResultSize: &sz}
		}
	case "split":
		if target != nil {
			sz := e.size(*target)
			most := sz.Max
			if len(args) > 1 {
				if v := args[1].Expr().AsLiteral(); v != nil {
					if i, ok := v.Value().(int64); ok {
						most = uint64(i)
					}
				}
			}
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(2 * common.StringTraversalCostFactor), ResultSize: &checker.SizeEstimate{Min: 0, Max: most}}
		}
	case "find", "findAll":
		if target != nil && len(args) >= 1 {
			sz := e.size(*target)
			strCost := sz.Add(checker.SizeEstimate{Min: 1, Max: 1}).MultiplyByCostFactor(common.StringTraversalCostFactor)
			regexCost := e.size(args[0]).MultiplyByCostFactor(common.RegexStringLengthCostFactor)
			return &checker.CallEstimate{CostEstimate: strCost.Multiply(regexCost), ResultSize: &checker.SizeEstimate{Min: 0, Max: sz.Max}}
		}
	case "url":
		if len(args) == 1 {
			sz := e.size(args[0])
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(common.StringTraversalCostFactor), ResultSize: &sz}
		}
	case "isIP", "isCIDR", "cidr", "quantity", "isQuantity", "semver", "isSemver":
		if len(args) >= 1 {
			return traverse(e.size(args[0]), common.StringTraversalCostFactor)
		}
	case "ip":
		if overload == "cidr_ip" {
			return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: 1}}
		}
		if len(args) >= 1 {
			return traverse(e.size(args[0]), common.StringTraversalCostFactor)
		}
	case "ip.isCanonical":
		if len(args) >= 1 {
			return traverse(e.size(args[0]), 2*common.StringTraversalCostFactor)
		}
	case "containsIP", "containsCIDR":
		if len(args) >= 1 {
			sz := checker.SizeEstimate{Min: 4, Max: 16}
			c := sz.Add(sz).MultiplyByCostFactor(common.StringTraversalCostFactor)
			if function == "containsCIDR" {
				c = c.Add(sz.MultiplyByCostFactor(common.StringTraversalCostFactor)).Add(checker.CostEstimate{Min: 1, Max: 1})
			}
			if overload == "cidr_contains_ip_string" || overload == "cidr_contains_cidr_string" {
				c = c.Add(checker.CostEstimate(e.size(args[0])).MultiplyByCostFactor(common.StringTraversalCostFactor))
			}
			return &checker.CallEstimate{CostEstimate: c}
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
		"sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub",
		"major", "minor", "patch", "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery":
		return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: 1}}
	case "_==_":
		if len(args) == 2 && args[0].Type().Equal(args[1].Type()) == types.True {
			switch t := args[0].Type(); t.TypeName() {
			case ipType.TypeName(), cidrType.TypeName(), quantityType.TypeName(), semverType.TypeName():
				return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: 1}}
			case formatType.TypeName():
				return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: maxFormatSize}.MultiplyByCostFactor(common.StringTraversalCostFactor)}
			case urlType.TypeName():
				size := checker.SizeEstimate{Min: 1, Max: 1}
				if r := args[1].ComputedSize(); r != nil {
					size = r.Union(*r)
				}
				return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: size.Max}.MultiplyByCostFactor(common.StringTraversalCostFactor)}
			}
		}
	case "validate":
		if len(args) >= 1 {
			return &checker.CallEstimate{CostEstimate: e.size(args[0]).MultiplyByCostFactor(common.StringTraversalCostFactor).MultiplyByCostFactor(maxFormatRegexSize * common.RegexStringLengthCostFactor)}
		}
	case "format.named":
		return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: 1}}
	}
	return nil
}

// CallCost is the cost of a call at run time.
func (e *estimator) CallCost(function, overload string, args []ref.Val, result ref.Val) *uint64 {
	cost := func(c uint64) *uint64 { return &c }
	switch function {
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf":
		if len(args) > 0 {
			return cost(traversalCost(args[0]))
		}
		return cost(0)
	case "lowerAscii", "upperAscii", "substring", "trim", "isIP", "isCIDR", "cidr", "url", "quantity", "isQuantity", "semver", "isSemver":
		if len(args) >= 1 {
			return cost(uint64(math.Ceil(float64(actualSize(args[0])) * common.StringTraversalCostFactor)))
		}
	case "replace", "split":
		if len(args) >= 1 {
			return cost(uint64(math.Ceil(float64(actualSize(args[0])) * 2 * common.StringTraversalCostFactor)))
		}
	case "join":
		if len(args) >= 1 {
			return cost(uint64(math.Ceil(float64(actualSize(result)) * 2 * common.StringTraversalCostFactor)))
		}
	case "find", "findAll":
		if len(args) >= 2 {
			strCost := uint64(math.Ceil((1.0 + float64(actualSize(args[0]))) * common.StringTraversalCostFactor))
			regexCost := uint64(math.Ceil(float64(actualSize(args[1])) * common.RegexStringLengthCostFactor))
			return cost(strCost * regexCost)
		}
	case "validate":
		if len(args) >= 2 {
			if f, ok := args[0].(*namedFormat); ok {
				strCost := uint64(math.Ceil((1.0 + float64(actualSize(args[1]))) * common.StringTraversalCostFactor))
				regexCost := uint64(math.Ceil(float64(f.maxRegexSize) * common.RegexStringLengthCostFactor))
				return cost(strCost * regexCost)
			}
		}
	case "ip":
		if overload == "cidr_ip" {
			return cost(1)
		}
		if len(args) >= 1 {
			return cost(uint64(math.Ceil(float64(actualSize(args[0])) * common.StringTraversalCostFactor)))
		}
	case "ip.isCanonical":
		if len(args) >= 1 {
			return cost(uint64(math.Ceil(float64(actualSize(args[0])) * 2 * common.StringTraversalCostFactor)))
		}
	case "containsIP", "containsCIDR":
		if len(args) >= 2 {
			cidrSize, otherSize := actualSize(args[0]), actualSize(args[1])
			c := uint64(math.Ceil(float64(cidrSize+cidrSize) * common.StringTraversalCostFactor))
			if function == "containsCIDR" {
				c += uint64(math.Ceil(float64(cidrSize)*common.StringTraversalCostFactor)) + 1
			}
			if overload == "cidr_contains_ip_string" || overload == "cidr_contains_cidr_string" {
				c += uint64(math.Ceil(float64(otherSize) * common.StringTraversalCostFactor))
			}
			return cost(c)
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
		"sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub",
		"major", "minor", "patch", "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery", "format.named":
		return cost(1)
	case "_==_":
		if len(args) == 2 {
			switch args[0].(type) {
			case ipVal, cidrVal, quantityVal, urlVal, semverVal, *namedFormat:
				return cost(1)
			}
		}
	}
	return nil
}

func actualSize(v ref.Val) uint64 {
	if s, ok := v.(traits.Sizer); ok {
		if n, ok := s.Size().(types.Int); ok {
			return uint64(n)
		}
	}
	return 1
}

func traversalCost(v ref.Val) uint64 {
	switch v := v.(type) {
	case types.String:
		return uint64(float64(len(string(v))) * common.StringTraversalCostFactor)
	case types.Bytes:
		return uint64(float64(len([]byte(v))) * common.StringTraversalCostFactor)
	case traits.Lister:
		var c uint64
		for it := v.Iterator(); it.HasNext() == types.True; {
			c += traversalCost(it.Next())
		}
		return c
	case traits.Mapper:
		var c uint64
		for it := v.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			c += traversalCost(k) + traversalCost(v.Get(k))
		}
		return c
	}
	return 1
}
