;; tests/e2e/89-lisp.t: a Lisp program whose functions make known numbers
;; of objects of each of the mprof paper's Lisp types, run by ECL under
;; mprof, interpreted (this file) and compiled (compile-file to a .fas).
;;   make-point (defstruct's constructor): 1000 structures
;;   sum-floats: 2000 double-floats, boxed into a simple-vector
;;   build-list: 5000 conses
;;   make-points: calls make-point 1000 times, makes nothing itself
;; The vectors are made at top level, outside the functions.  It prints a
;; line and exits with status 3.
(defstruct point x y)

(defun make-points (n v)
  (dotimes (i n)
    (setf (svref v i) (make-point :x i :y i))))

(defun sum-floats (n v)
  (dotimes (i n)
    (setf (svref v i) (* (+ i 1) 1.5d0))))

(defun build-list (n)
  (let ((l nil))
    (dotimes (i n)
      (setq l (cons i l)))
    l))

(defvar *points* (make-array 1000))
(defvar *floats* (make-array 2000))
(make-points 1000 *points*)
(sum-floats 2000 *floats*)
(format t "~a ~a ~a~%" (point-x (svref *points* 999)) (svref *floats* 1999)
        (length (build-list 5000)))
(ext:quit 3)
