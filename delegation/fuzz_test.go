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

// FuzzParseAdmissionResponse: any webhook answer is read or refused, never
// a panic, and one read is for the review asked and patches only as a
// JSONPatch.
func FuzzParseAdmissionResponse(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"patchType":"JSONPatch","patch":"W10="}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":false,"status":{"code":403,"message":"no"}}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"v","patch":"W10="}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseAdmissionResponse("u", data)
		if err != nil {
			return
		}
		if r.UID != "u" || len(r.Patch) > 0 && (r.PatchType == nil || *r.PatchType != "JSONPatch") {
			t.Fatalf("accepted %s", data)
		}
	})
}
