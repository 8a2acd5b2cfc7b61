//go:build !amd64 || noasm

package tensor

// haveElemAsm is false: no assembly in this build.
const haveElemAsm = false

func tanh4(dst, src []float32) { panic("tensor: no assembly in this build") }

func elu4(dst, src []float32) { panic("tensor: no assembly in this build") }

func eluGradAcc8(ga, g, y []float32) { panic("tensor: no assembly in this build") }

func tanhGradAcc8(ga, g, y []float32) { panic("tensor: no assembly in this build") }

func eluGradTo8(ga, g, y []float32) { panic("tensor: no assembly in this build") }

func tanhGradTo8(ga, g, y []float32) { panic("tensor: no assembly in this build") }

func relu8(dst, src []float32) { panic("tensor: no assembly in this build") }

func reluGradTo8(ga, g, y []float32) { panic("tensor: no assembly in this build") }

func mulAcc8(a, x, y []float32) { panic("tensor: no assembly in this build") }

func tanh8z(dst, src []float32) { panic("tensor: no assembly in this build") }

func elu8z(dst, src []float32) { panic("tensor: no assembly in this build") }

// tanh8 and elu8 are nil: no assembly in this build.
var tanh8, elu8 func(dst, src []float32)
