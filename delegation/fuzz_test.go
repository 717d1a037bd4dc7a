package delegation

import "testing"

// FuzzParseAuthConfigMap: any ConfigMap body is read or refused, never a
// panic, and a reading that succeeds has a user header for its proxy CA.
func FuzzParseAuthConfigMap(f *testing.F) {
	f.Add([]byte(`{"data":{"requestheader-allowed-names":"[\"front-proxy-client\"]","requestheader-username-headers":"[\"X-Remote-User\"]"}}`))
	f.Add([]byte(`{"data":{"client-ca-file":"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"}}`))
	f.Add([]byte(`{"data":{"requestheader-group-headers":"x"}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseAuthConfigMap(data)
		if err == nil && s.proxyCAs != nil && len(s.user) == 0 {
			t.Fatalf("a proxy CA without user headers: %s", data)
		}
	})
}
