;; A minimal waPC guest for policy-runner's end-to-end tests.
;;
;; Layout: constant strings live below 0x1000; the guest request
;; (operation name, payload) is copied to 0x1000 / 0x2000 and responses are
;; assembled at 0x10000. The operation is recognised by its name length:
;;   17 validate_settings: valid only for the payload `{}`
;;   16 protocol_version:  "v1"
;;    8 validate:          logs one record, looks up MachineDeployment md-0
;;                         in namespace default and answers
;;                         {"accepted":true,"mutated_object":<the look-up reply>};
;;                         a failed look-up becomes a guest error carrying the
;;                         host error text. A payload holding `no-lookup`
;;                         (an object so named) is accepted without the
;;                         look-up, as the policy accepts a request that needs
;;                         none. An instance answers one validate
;;                         only; a second one is the guest error
;;                         "instance reused", so the tests see which instance
;;                         shape the runner used.
(module
  (import "wapc" "__guest_request" (func $guest_request (param i32 i32)))
  (import "wapc" "__guest_response" (func $guest_response (param i32 i32)))
  (import "wapc" "__guest_error" (func $guest_error (param i32 i32)))
  (import "wapc" "__host_call" (func $host_call (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wapc" "__host_response_len" (func $host_response_len (result i32)))
  (import "wapc" "__host_response" (func $host_response (param i32)))
  (import "wapc" "__host_error_len" (func $host_error_len (result i32)))
  (import "wapc" "__host_error" (func $host_error (param i32)))

  (memory (export "memory") 4)

  (data (i32.const 256) "kubewarden") ;; kubewarden, 10 bytes
  (data (i32.const 272) "tracing") ;; tracing, 7 bytes
  (data (i32.const 288) "log") ;; log, 3 bytes
  (data (i32.const 304) "kubernetes") ;; kubernetes, 10 bytes
  (data (i32.const 320) "get_resource") ;; get_resource, 12 bytes
  (data (i32.const 336) "{\"valid\":true}") ;; settings_ok, 14 bytes
  (data (i32.const 352) "{\"valid\":false,\"message\":\"only {} is accepted\"}") ;; settings_bad, 47 bytes
  (data (i32.const 400) "\"v1\"") ;; protocol, 4 bytes
  (data (i32.const 416) "{\"level\":\"info\",\"message\":\"guest says hello\",\"policy\":\"test-guest\"}") ;; log_record, 67 bytes
  (data (i32.const 496) "{\"api_version\":\"cluster.x-k8s.io/v1beta1\",\"kind\":\"MachineDeployment\",\"name\":\"md-0\",\"namespace\":\"default\",\"disable_cache\":false,\"field_masks\":null}") ;; get_md0, 146 bytes
  (data (i32.const 656) "{\"accepted\":true,\"mutated_object\":") ;; mutate_prefix, 34 bytes
  (data (i32.const 704) "}") ;; close, 1 bytes
  (data (i32.const 720) "unknown operation") ;; unknown_op, 17 bytes
  (data (i32.const 752) "instance reused") ;; reused, 15 bytes
  (data (i32.const 784) "no-lookup") ;; no_lookup, 9 bytes
  (data (i32.const 800) "{\"accepted\":true}") ;; accepted, 17 bytes

  (global $validated (mut i32) (i32.const 0))

  ;; Whether the $len bytes at $at hold the $n bytes at $needle.
  (func $contains (param $at i32) (param $len i32) (param $needle i32) (param $n i32) (result i32)
    (local $i i32)
    (local $j i32)
    (block $absent
      (loop $next_start
        (br_if $absent (i32.gt_s (local.get $n) (i32.sub (local.get $len) (local.get $i))))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $next_byte
            (if (i32.eq (local.get $j) (local.get $n))
              (then (return (i32.const 1))))
            (br_if $mismatch
              (i32.ne
                (i32.load8_u (i32.add (i32.add (local.get $at) (local.get $i)) (local.get $j)))
                (i32.load8_u (i32.add (local.get $needle) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $next_byte)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next_start)))
    (i32.const 0))

  (func (export "__guest_call") (param $op_len i32) (param $req_len i32) (result i32)
    (local $len i32)
    (call $guest_request (i32.const 0x1000) (i32.const 0x2000))

    ;; validate_settings
    (if (i32.eq (local.get $op_len) (i32.const 17))
      (then
        (if (i32.eq (local.get $req_len) (i32.const 2))
          (then (call $guest_response (i32.const 336) (i32.const 14)))
          (else (call $guest_response (i32.const 352) (i32.const 47))))
        (return (i32.const 1))))

    ;; protocol_version
    (if (i32.eq (local.get $op_len) (i32.const 16))
      (then
        (call $guest_response (i32.const 400) (i32.const 4))
        (return (i32.const 1))))

    ;; validate
    (if (i32.eq (local.get $op_len) (i32.const 8))
      (then
        (if (global.get $validated)
          (then
            (call $guest_error (i32.const 752) (i32.const 15))
            (return (i32.const 0))))
        (global.set $validated (i32.const 1))
        (drop (call $host_call (i32.const 256) (i32.const 10) (i32.const 272) (i32.const 7) (i32.const 288) (i32.const 3) (i32.const 416) (i32.const 67)))
        (if (call $contains (i32.const 0x2000) (local.get $req_len) (i32.const 784) (i32.const 9))
          (then
            (call $guest_response (i32.const 800) (i32.const 17))
            (return (i32.const 1))))
        (if (i32.eqz (call $host_call (i32.const 256) (i32.const 10) (i32.const 304) (i32.const 10) (i32.const 320) (i32.const 12) (i32.const 496) (i32.const 146)))
          (then
            (local.set $len (call $host_error_len))
            (call $host_error (i32.const 0x10000))
            (call $guest_error (i32.const 0x10000) (local.get $len))
            (return (i32.const 0))))
        (local.set $len (call $host_response_len))
        (memory.copy (i32.const 0x10000) (i32.const 656) (i32.const 34))
        (call $host_response (i32.const 65570))
        (memory.copy
          (i32.add (i32.const 65570) (local.get $len))
          (i32.const 704)
          (i32.const 1))
        (call $guest_response
          (i32.const 0x10000)
          (i32.add (local.get $len) (i32.const 35)))
        (return (i32.const 1))))

    (call $guest_error (i32.const 720) (i32.const 17))
    (i32.const 0))
)
